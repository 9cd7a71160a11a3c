{{- define "am.name" -}}{{ .Release.Name }}-assistant-monitor{{- end -}}
{{- define "am.labels" -}}
app.kubernetes.io/name: assistant-monitor
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
{{- end -}}
{{- define "am.selector" -}}
app.kubernetes.io/name: assistant-monitor
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}
{{- define "am.config" -}}
{{- $config := deepCopy .Values.config -}}
{{- if .Values.kafka.enabled -}}
{{- $_ := set $config "kafka" (dict "enabled" true "brokers" .Values.kafka.brokers "topic" .Values.kafka.topic "group_id" .Values.kafka.groupId) -}}
{{- end -}}
{{- if .Values.judge.endpoints -}}
{{- $judging := get $config "judging" | default dict -}}
{{- $_ := set $judging "llm" (dict "endpoints" .Values.judge.endpoints) -}}
{{- $_ := set $config "judging" $judging -}}
{{- end -}}
{{- toYaml $config -}}
{{- end -}}
{{- define "am.pod" -}}
metadata:
  labels: {{- include "am.selector" . | nindent 4 }}
  annotations:
    checksum/config: {{ include "am.config" . | sha256sum }}
spec:
  securityContext: {{- toYaml .Values.podSecurityContext | nindent 4 }}
  containers:
    - name: assistant-monitor
      image: "{{ .Values.image.repository }}:{{ .Values.image.tag }}"
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args: ["run", "--config", "/etc/assistant-monitor/config.yaml"]
      env:
        - name: ASSISTANT_MONITOR_RECEIVERS__BEARER_TOKEN
          valueFrom: {secretKeyRef: {name: {{ include "am.name" . }}, key: receiver-token, optional: true}}
        - name: ASSISTANT_MONITOR_STORE__URL
          valueFrom: {secretKeyRef: {name: {{ include "am.name" . }}, key: store-url, optional: true}}
        {{- range $i, $e := .Values.judge.endpoints }}
        - name: ASSISTANT_MONITOR_JUDGING__LLM__ENDPOINTS__{{ $i }}__API_KEY
          valueFrom: {secretKeyRef: {name: {{ include "am.name" $ }}, key: judge-api-key, optional: true}}
        {{- end }}
      ports:
        - {name: otlp-grpc, containerPort: 4317}
        - {name: otlp-http, containerPort: 4318}
        - {name: metrics, containerPort: 9464}
      readinessProbe:
        httpGet: {path: /readyz, port: metrics}
        periodSeconds: 5
      livenessProbe:
        httpGet: {path: /healthz, port: metrics}
        initialDelaySeconds: 10
        periodSeconds: 10
      resources: {{- toYaml .Values.resources | nindent 8 }}
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        capabilities: {drop: [ALL]}
      volumeMounts:
        - {name: config, mountPath: /etc/assistant-monitor, readOnly: true}
        - {name: store, mountPath: /var/lib/assistant-monitor}
        - {name: tmp, mountPath: /tmp}
  volumes:
    - name: config
      configMap: {name: {{ include "am.name" . }}}
    - name: tmp
      emptyDir: {}
{{- end -}}
