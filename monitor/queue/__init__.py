"""The Kafka judge queue, and the consumer-group machinery it shares with the OTLP Kafka source.

Single node, the SQLite store is the judge queue (monitor/store.py). Scaled out, ingest replicas
publish each sampled turn to a topic (`SampledTurnPublisher`) and judge replicas form a consumer
group over it (`SampledTurnSource`), each judging into its own store. The group membership, the
offset bookkeeping and the hand-over on a rebalance (`GroupMember`) are the ones the OTLP Kafka
source uses. This package imports no stage: ingest and the judges both build on it.
"""
