# ruff: noqa: E501  (hand-written records: prose, one per line)
"""The second blind PII set's threads (bench/data/make_pii_fresh.py blind2 builds pii_blind2.jsonl from them)."""

from __future__ import annotations

from make_pii_fresh import A, D, Q, Thread

THREADS: list[Thread] = [
    [
        (Q, "Hi, can you check why my refund for order {{ID|ORD-558201}} hasn't arrived? It's under [[P|Tamsin Oyelaran]]."),
        (D, "CRM record — customer: [[P|Tamsin Oyelaran]]. Email: [[E|t.oyelaran@fernmail.example]]. Phone: [[T|07700 900318]]. Delivery address: [[A|Flat 3, 22 Quarry Lane, Bathgate EH48 2QT]]. Order {{ID|ORD-558201}} placed {{DATE|2 March}} for a {{PRODUCT|Brevia Steam Iron 2400}} at {{PRICE|£64.99}}. Return logged by agent [[P|Callum Reidy]] on {{DATE|11 March}}; parcel received at the {{LOCATION|Livingston}} returns centre on {{DATE|14 March}}. Refund of {{PRICE|£64.99}} issued to card ending 4471 on {{DATE|15 March}}; bank processing typically takes three to five working days. Note from {{ORG|Hargreaves & Sons Couriers}}: collection was one day late due to weather."),
        (A, "Thanks, [[P|Tamsin]]. The refund of {{PRICE|£64.99}} for {{ID|ORD-558201}} was issued on {{DATE|15 March}} to your card, so it should show within five working days. If it's not there by {{DATE|22 March}}, reply here and I'll escalate it."),
    ],
    [
        (Q, "I need to update the billing address on our SaaS account, the invoices still go to the old office. Account admin is [[P|Devan Raghupathy]]."),
        (D, "Account summary (Ledgerline Cloud). Organisation: {{ORG|Okafor Logistics Ltd}}. Plan: {{PRODUCT|Ledgerline Business}} annual, renewal {{DATE|1 September 2025}}, {{PRICE|€4,320.00}} per year. Admin contact: [[P|Devan Raghupathy]] ([[E|devan.r@okafor-logistics.example]], [[T|+44 20 7946 0852]]). Billing address on file: [[A|Unit 7, Harbour Trade Park, 41 Dock Road, Felixstowe IP11 3TZ]]. Secondary contact: [[P|Ngozi Adebayo-Clarke]], Finance Manager. Last invoice {{ID|INV-2025-00931}} emailed {{DATE|3 June}}. Login from [[IP|198.51.100.173]] on {{DATE|4 June}}."),
        (A, "I can see the billing address is still [[A|Unit 7, Harbour Trade Park, 41 Dock Road, Felixstowe IP11 3TZ]]. [[P|Devan]], as admin you can change it under Settings → Billing, or send me the new address and I'll raise a change request; the next invoice after {{DATE|1 September 2025}} will use it."),
    ],
    [
        (Q, "hey my name is [[P|florêncio barroso]], i ordered the trail shoes last week and got the wrong size, how do i swap them"),
        (D, "Order lookup result: {\"order_id\": \"{{ID|SO-7740219}}\", \"customer\": \"[[P|Florêncio Barroso]]\", \"email\": \"[[E|florbarroso88@correio.example]]\", \"items\": [{\"sku\": \"{{SKU|TRX-M-425-BLU}}\", \"name\": \"{{PRODUCT|Trailrex Ridge 2}}\", \"size\": \"42.5\", \"price\": \"{{PRICE|€119.00}}\"}], \"ship_to\": \"[[A|Rua das Flores 118, 2º Esq, 4050-262 Porto]]\", \"carrier\": \"{{ORG|CTT Expresso}}\", \"tracking\": \"{{TRACKING_NUMBER|RR482913557PT}}\", \"delivered\": \"{{DATE|2025-05-19}}\", \"exchange_eligible\": true, \"window_days\": 30, \"return_reason_options\": [\"wrong size\", \"faulty\", \"changed mind\"], \"agent_note\": \"customer chatted on {{DATE|2025-05-21}} asking about sizing; suggested half size up, stock for 43 available at {{LOCATION|Gaia}} warehouse\", \"loyalty_tier\": \"{{PRODUCT|Trailrex Club Silver}}\"}"),
        (A, "hi [[P|florêncio]] — your {{PRODUCT|Trailrex Ridge 2}} (order {{ID|SO-7740219}}) is eligible for a free exchange until 30 days after delivery. Start it from the order page, pick the new size, and we'll send a prepaid label to [[E|florbarroso88@correio.example]]."),
    ],
    [
        (Q, "A patient letter for Mrs [[P|Bronwen Achterberg]] came back undelivered. Can you check which address we have?"),
        (D, "Patient administration extract — {{ORG|St Aldhelm's Community Hospital}}. Patient: Mrs [[P|Bronwen Achterberg]], DOB [[DOB|14/07/1948]], NHS number {{ID|943 476 5919}}. Address: [[A|Rose Cottage, 4 Mill Bank, Ashby Parva, Lutterworth LE17 5HR]]. Tel: [[T|01632 960 418]]. GP: Dr [[P|Tariq Bhamjee]], {{ORG|Wycliffe Road Surgery}}. Next appointment: {{DATE|9 October}}, Ophthalmology, {{LOCATION|Leicester Royal}} outpatient block. Medication list includes {{DRUG|latanoprost}} and {{DRUG|amlodipine}}. Letter returned by {{ORG|Royal Mail}} on {{DATE|24 September}} marked 'addressee gone away'."),
        (A, "We hold [[A|Rose Cottage, 4 Mill Bank, Ashby Parva, Lutterworth LE17 5HR]] for Mrs [[P|Achterberg]]. Since {{ORG|Royal Mail}} marked it 'gone away', please confirm a new address with her by phone or through Dr [[P|Bhamjee]]'s surgery before re-sending the {{DATE|9 October}} appointment letter."),
    ],
    [
        (Q, "Kunde fragt nach dem Stand seiner Kfz-Schadenmeldung, Policennummer {{ID|KV-88123-47}}."),
        (D, "Schadenakte {{ID|SCH-2025-044187}} — Versicherungsnehmer: [[P|Matthias Oberländer]], geb. [[DOB|03.11.1979]], [[A|Lindenstraße 27, 34117 Kassel]]. Telefon [[T|+49 561 4471 2290]], E-Mail [[E|m.oberlaender@postfach.example]]. Police {{ID|KV-88123-47}}, Tarif {{PRODUCT|AutoSchutz Komfort}}. Schadentag {{DATE|12.08.2025}}, Parkrempler auf dem Parkplatz am {{LOCATION|Königsplatz}}. Gutachter: [[P|Svenja Kowalczyk]], {{ORG|Brandt & Keller Sachverständige}}. Reparaturkosten laut Gutachten {{PRICE|2.184,50 €}}. Auszahlung auf [[IBAN|DE42 4150 4802 9119 2974 34]] freigegeben am {{DATE|02.09.2025}}. Der Kunde hat telefonisch nach dem Stand gefragt; Sachbearbeiterin [[P|Henrike Voß]] hat den Rückruf zugesagt."),
        (A, "Herr [[P|Oberländer]], Ihre Schadenmeldung {{ID|SCH-2025-044187}} ist abgeschlossen: Die Auszahlung über {{PRICE|2.184,50 €}} wurde am {{DATE|02.09.2025}} auf Ihr Konto freigegeben und sollte in zwei bis drei Bankarbeitstagen eingehen."),
    ],
    [
        (Q, "Can you summarise the complaint from the tenant at [[A|9 Kestrel Court]]? I think her surname is [[P|Venkataraman]]."),
        (D, "Ticket {{ID|PM-30412}} (Northgate Lettings). Tenant: [[P|Priya Venkataraman]], [[A|9 Kestrel Court, 118 Albion Street, Leeds LS2 8PQ]]. Mobile [[T|07700 900742]]. Reported {{DATE|6 January}}: black mould in the bathroom and a leaking extractor fan; landlord [[P|Gordon Lithgow]] notified same day. Contractor {{ORG|Mould & Damp Solutions Yorkshire}} booked for {{DATE|15 January}} but did not attend. Tenant followed up {{DATE|19 January}} saying her son has asthma and uses a {{DRUG|salbutamol}} inhaler daily. Property manager [[P|Rhiannon Tubb]] promised a revisit within seven days."),
        (A, "[[P|Priya Venkataraman]] reported black mould and a leaking extractor fan on {{DATE|6 January}}; the contractor missed the {{DATE|15 January}} visit. She chased on {{DATE|19 January}}, mentioning a health concern for her son. [[P|Rhiannon Tubb]] promised a revisit within a week, so this is now overdue."),
    ],
    [
        (Q, "Why was the card payment declined on booking BK-66172? Customer is [[P|Kenji Watanabe-Ross]]."),
        (D, "Payment gateway log {{DATE|2025-07-02}} 14:22:07Z booking={{ID|BK-66172}} customer=\"[[P|Kenji Watanabe-Ross]]\" card=[[C|4377 5945 8079 8691]] amount={{PRICE|AUD 1,846.00}} merchant=\"{{ORG|Coral Coast Holidays}}\" result=DECLINED reason=\"3DS challenge failed\" ip=[[IP|203.0.113.239]] billing=\"[[A|14 Banksia Parade, Cronulla NSW 2230]]\" phone=\"[[T|+61 491 570 156]]\" retry_count=2 product=\"{{PRODUCT|Whitsundays 5-Night Sail & Stay}}\" note=\"customer may retry with alternative card or pay by bank transfer\"\n{{DATE|2025-07-02}} 14:31:40Z booking={{ID|BK-66172}} event=hold_extended by=\"[[P|Shona Pettigrew]]\" until={{DATE|2025-07-04}} reason=\"customer called, travelling with partner [[P|Amelia Tran]]; wants to keep cabin 14 on the {{PRODUCT|Reef Explorer}}\""),
        (A, "The payment for {{ID|BK-66172}} was declined because the 3-D Secure check failed twice — usually the bank's verification step wasn't completed. Ask Mr [[P|Watanabe-Ross]] to retry and approve the prompt in his banking app, or pay the {{PRICE|AUD 1,846.00}} by bank transfer."),
    ],
    [
        (Q, "Please draft a reply to [[P|Wilf Hendry]] about his overdue library fines."),
        (D, "Library account — borrower [[P|Wilfred Hendry]] (known as [[P|Wilf]]), card {{ID|LB00472913}}. Address: [[A|27 Thistle Brae, Kirkcaldy KY1 2RJ]]. Email [[E|wilf.hendry@northmail.example]]. Overdue items: '{{PRODUCT|The Salt Road}}' due {{DATE|3 April}}, '{{PRODUCT|Birds of the Fife Coast}}' due {{DATE|3 April}}. Fines total {{PRICE|£7.40}}. Branch: {{LOCATION|Kirkcaldy Galleries}}. Borrower asked in person whether fines can be waived as he was in hospital at {{LOCATION|Victoria Hospital}} in March; staff member [[P|Morag Ince]] said she would check the policy. Policy KB-12: fines may be waived for documented hospital stays."),
        (A, "Dear [[P|Wilf]], thank you for letting us know about your hospital stay. Under our policy we can waive the {{PRICE|£7.40}} in fines for '{{PRODUCT|The Salt Road}}' and '{{PRODUCT|Birds of the Fife Coast}}' — please return both books to {{LOCATION|Kirkcaldy Galleries}} when you're able and we will bill nothing further."),
    ],
    [
        (Q, "our new hire starts monday — can you confirm her payroll details are complete? it's [[P|Aoife Ní Bhriain]]"),
        (D, "HR onboarding form. Employee: [[P|Aoife Ní Bhriain]]. Job title: {{JOB_TITLE|Senior Data Analyst}}. Start date: {{DATE|7 July 2025}}. Date of birth: [[DOB|22 February 1991]]. PPS number: {{ID|provided separately}}. Home address: [[A|Apartment 12, The Maltings, Bridge Street, Kilkenny R95 X2C4]]. Mobile: [[T|+353 87 555 0193]]. Personal email: [[E|aoife.nibhriain@inbox.example]]. Bank: [[IBAN|IE07 AIBK 8811 0806 9568 82]]. Line manager: [[P|Declan Furlong]]. Emergency contact: [[P|Gráinne Ní Bhriain]] (sister), [[T|+353 86 555 0127]]. Laptop request {{ID|IT-4471}} approved."),
        (A, "Yes — Ms [[P|Ní Bhriain]]'s form has her bank details, address, date of birth and emergency contact. Only the PPS number is marked 'provided separately', so payroll should confirm they have it before the first run after {{DATE|7 July 2025}}."),
    ],
    [
        (Q, "Customer in chat says someone used his account. Can you see the login history for [[P|Mark Delacroix]]?"),
        (D, "Security audit log, user [[E|mark.delacroix@brightwave.example]] ([[P|Mark Delacroix]]):\n2025-04-11 08:02 login OK from [[IP|192.0.2.219]] (Lyon, FR) device {{PRODUCT|Pixel 8}}\n2025-04-12 23:47 login OK from [[IP|198.51.100.251]] (unknown) device Windows\n2025-04-12 23:49 password changed\n2025-04-12 23:51 payout IBAN changed to [[IBAN|FR98 2446 5552 2105 9552 2675 941]]\n2025-04-13 07:15 user reported issue via chat; agent [[P|Élodie Marchetti]] locked the account\nRecovery code issued: [[S|Q7RX-94KM-2TZB]]\nAccount tier: {{PRODUCT|Brightwave Pro}}, version {{VERSION|4.12.1}}"),
        (A, "Yes, there was a login from an unknown device at 23:47 on {{DATE|12 April}}, followed by a password change and a new payout account. [[P|Élodie Marchetti]] has locked the account. Please don't share the recovery code in chat; send it to Mr [[P|Delacroix]] through the verified email only, and reverse the payout change."),
    ],
]
THREADS += [
    [
        (Q, "Customer [[P|Hollis Wexford-Pyne]] wants to know why his electricity {{WORD|bill}} jumped in January."),
        (D, "Utility account {{ID|ELC-0093317245}} — holder [[P|Hollis Wexford-Pyne]], supply address [[A|58 Cobbler's Row, Frome BA11 1DX]]. Tariff: {{PRODUCT|FlexiSaver Variable}}. Meter serial {{ID|K19D04428}}. Readings: {{DATE|1 December}} 41,822 kWh (actual), {{DATE|1 January}} 43,210 kWh (estimated). January bill {{PRICE|£412.36}} against a usual {{PRICE|£150}}. Customer phoned on {{DATE|8 January}}; agent [[P|Bethany Orme]] advised submitting an actual reading. Direct Debit from sort code 20-45-77. Smart meter install offered by {{ORG|Mendip Metering Services}} on {{DATE|20 February}}. Contact: [[T|07700 900581]], [[E|hollis.wp@meadowpost.example]]."),
        (A, "The January bill of {{PRICE|£412.36}} was based on an estimated reading, which looks too high. If [[P|Hollis]] sends an actual reading from meter {{ID|K19D04428}} we'll reissue the bill, and any difference will be spread over the next bills. The smart meter visit on {{DATE|20 February}} would stop future estimates."),
    ],
    [
        (Q, "Bonjour, je n'ai pas reçu ma carte Vitale mise à jour, pouvez-vous vérifier mon dossier ? Je suis [[P|Ghislaine Moreau-Tessier]]."),
        (D, "Dossier assuré — {{ORG|Mutuelle Santé Atlantique}}. Nom : [[P|Ghislaine Moreau-Tessier]]. Née le [[DOB|17 mai 1966]]. Adresse : [[A|12 bis, rue des Tanneurs, 44000 Nantes]]. Téléphone : [[T|01 99 00 47 21]]. Courriel : [[E|g.moreau-tessier@courriel.example]]. Numéro adhérent {{ID|MSA-7720418}}. Demande de mise à jour envoyée le {{DATE|4 mars}}, courrier expédié le {{DATE|18 mars}} par {{ORG|La Poste}}. Conseiller : [[P|Yannick Le Goff]], agence de {{LOCATION|Saint-Herblain}}. Remboursement de {{DRUG|Doliprane}} et {{DRUG|Levothyrox}} en attente de la nouvelle carte."),
        (A, "Madame [[P|Moreau-Tessier]], votre carte a été expédiée le {{DATE|18 mars}} à l'adresse [[A|12 bis, rue des Tanneurs, 44000 Nantes]]. Si elle n'arrive pas d'ici une semaine, [[P|Yannick Le Goff]] pourra en demander une nouvelle."),
    ],
    [
        (Q, "Can you check the HR file for [[P|Tobiah Essien]] before his performance review? Just the basics."),
        (D, "Employee record — [[P|Tobiah Essien]], {{JOB_TITLE|Warehouse Shift Supervisor}}, {{LOCATION|Daventry}} distribution centre, {{ORG|Penhallow Retail Group}}. Employee no. {{ID|E-204417}}. Joined {{DATE|14 August 2019}}. Home: [[A|31 Wheatfield Drive, Northampton NN3 8LW]]. Mobile [[T|07700 900264]]. NI number [[NINO|JT 48 27 91 C]]. Manager: [[P|Claudette Rusu]]. Last review {{DATE|March 2024}}: 'meets expectations'. Training: forklift refresher completed, {{PRODUCT|SafeLift}} certification valid until {{DATE|2026}}. Absence: 4 days in the last 12 months. Note by [[P|Claudette Rusu]]: asked to be considered for the {{JOB_TITLE|Operations Manager}} vacancy."),
        (A, "[[P|Tobiah Essien]] has been a {{JOB_TITLE|Warehouse Shift Supervisor}} at {{LOCATION|Daventry}} since {{DATE|14 August 2019}}, was rated 'meets expectations' last year, has 4 absence days and current forklift certification. He has asked to be considered for the {{JOB_TITLE|Operations Manager}} role."),
    ],
    [
        (Q, "ok so i got charged twice for the same hotel, booking ref {{ID|HX-22871}}, can someone fix this"),
        (D, "Chat transcript, {{ORG|StayNest}} support, {{DATE|21 June}}.\n[[P|solomiia]]: ok so i got charged twice for the same hotel\nAgent [[P|Ravi]]: Sorry about that! Can you confirm the name on the booking?\n[[P|solomiia]]: [[P|Solomiia Hrytsenko]], booked the {{ORG|Hotel Lindenhof}} in {{LOCATION|Salzburg}} for 3 nights\nAgent [[P|Ravi]]: Thanks. I see two charges of {{PRICE|€387.00}} on card [[C|5147 1872 0743 9611]].\n[[P|solomiia]]: yes thats my mastercard. my address is [[A|ul. Zielona 14/6, 31-421 Kraków]] if you need it\nAgent [[P|Ravi]]: Not needed, thanks. I've raised refund request {{ID|RF-118204}} for the duplicate."),
        (A, "Booking {{ID|HX-22871}} was charged twice at {{PRICE|€387.00}}. A refund for the duplicate has been raised as {{ID|RF-118204}}; it usually reaches the card within 5–10 business days. Nothing more is needed from you, [[P|Solomiia]]."),
    ],
    [
        (Q, "Tenant application for the flat on {{LOCATION|Marchmont Road}} — can you check references for [[P|Hamish Gallacher]] and his partner?"),
        (D, "Letting application {{ID|APP-5512}} — property: [[A|2F1, 47 Marchmont Road, Edinburgh EH9 1HX]], rent {{PRICE|£1,350 pcm}}. Applicant 1: [[P|Hamish Gallacher]], DOB [[DOB|09/12/1993]], {{JOB_TITLE|software engineer}} at {{ORG|Skyelark Games}}, salary {{PRICE|£52,000}}. Current address: [[A|Flat 8, 19 Dalry Road, Edinburgh EH11 2BQ]]. Applicant 2: [[P|Nkechi Obi-Gallacher]], DOB [[DOB|30/04/1995]], {{JOB_TITLE|staff nurse}} at the {{LOCATION|Royal Infirmary}}. Previous landlord: [[P|Fergus Dunbar]], [[T|0131 496 0872]], reference received {{DATE|2 May}}: 'excellent tenants, rent always on time'. Employer reference for applicant 2 still outstanding."),
        (A, "The previous landlord, [[P|Fergus Dunbar]], gave an excellent reference on {{DATE|2 May}}, and [[P|Hamish Gallacher]]'s employment at {{ORG|Skyelark Games}} is confirmed. The employer reference for [[P|Nkechi Obi-Gallacher]] is still outstanding, so the application can't be approved yet."),
    ],
    [
        (Q, "A US customer asked us to delete his data. Which systems hold records for [[P|Dwayne Petrakis]]?"),
        (D, "Data subject search result (GDPR/CCPA tool {{VERSION|v2.3}}):\n- CRM: [[P|Dwayne Petrakis]], [[E|dpetrakis@lakeshore-mail.example]], [[T|(312) 555-0147]], [[A|2210 W Belmont Ave, Apt 3R, Chicago, IL 60618]]\n- Billing: card on file [[C|4411 1510 9549 4130]], last charge {{PRICE|$89.00}} on {{DATE|2025-02-11}}\n- Tax form W-9: SSN [[SSN|431-58-2297]]\n- Support tickets: {{ID|CS-88120}}, {{ID|CS-90233}} handled by [[P|Xiomara Quintanilla]]\n- Marketing list: subscribed to {{PRODUCT|Lakeshore Weekly}}\n- Web logs: [[IP|2001:db8:7c2::41]] (retained 90 days)\nLegal hold: none. Retention exception: tax records must be kept seven years."),
        (A, "Mr [[P|Petrakis]] has data in CRM, billing, marketing, support tickets and web logs, all of which can be deleted. The W-9 tax form must be kept seven years under the retention exception, so tell him that record stays."),
    ],
    [
        (Q, "Status on [[P|Rosalind Fairweather]]'s mortgage application please."),
        (D, "Mortgage case {{ID|MC-2025-3381}} — {{ORG|Thornbury Building Society}}. Applicant: [[P|Rosalind Fairweather]], {{JOB_TITLE|primary school teacher}}. Property being purchased: [[A|The Old Forge, Church Lane, Great Bardfield, Braintree CM7 4SJ]], price {{PRICE|£465,000}}, loan {{PRICE|£372,000}} over 30 years, product {{PRODUCT|5-Year Fixed 4.29%}}. Valuation by [[P|Ashok Bandyopadhyay]] MRICS on {{DATE|10 June}}: satisfactory. Solicitor: {{ORG|Pettigrew Lowe LLP}}, contact [[P|Imogen Stark]]. Outstanding: three months' payslips. Applicant phone [[T|01632 960 735]]. Offer expected within 5 working days of documents."),
        (A, "[[P|Rosalind Fairweather]]'s application {{ID|MC-2025-3381}} has a satisfactory valuation; we're only waiting on three months' payslips. Once they arrive, an offer should follow within five working days."),
    ],
    [
        (Q, "Hola, quiero cambiar la cuenta donde me cobran el seguro de hogar. Soy [[P|Begoña Etxeberria Alkorta]]."),
        (D, "Ficha de cliente — {{ORG|Seguros Cantábrico}}. Titular: [[P|Begoña Etxeberria Alkorta]]. DNI: {{ID|facilitado en oficina}}. Domicilio asegurado: [[A|Calle Urdaneta 9, 3º izquierda, 48013 Bilbao]]. Teléfono: [[T|+34 944 55 01 82]]. Póliza {{ID|HG-0048812}}, producto {{PRODUCT|Hogar Plus}}, prima anual {{PRICE|312,40 €}}. Cuenta de cargo actual: [[IBAN|ES28 1947 8598 1414 3169 0077]]. Última modificación {{DATE|15/01/2025}} por el agente [[P|Iñaki Zubiaurre]]. Próximo recibo: {{DATE|1 de julio}}. Para cambiar la cuenta se requiere firma del titular."),
        (A, "Hola [[P|Begoña]], puedo iniciar el cambio de cuenta para la póliza {{ID|HG-0048812}}. Necesitamos su firma en el mandato; si lo envía antes del {{DATE|1 de julio}}, el próximo recibo se cargará ya en la nueva cuenta."),
    ],
    [
        (Q, "Summarise the incident report from the Brisbane depot."),
        (D, "Incident report {{ID|WHS-0417}}, {{ORG|Kookaburra Freight}}, {{LOCATION|Eagle Farm}} depot. Date: {{DATE|3 September}}. Injured worker: [[P|Lachlan Mbeki-Harris]], {{JOB_TITLE|forklift operator}}, home address [[A|7/22 Kingsford Smith Drive, Hamilton QLD 4007]], phone [[T|0491 570 313]]. Witness: [[P|Precious Nhlapo]], {{JOB_TITLE|dispatch clerk}}. Description: pallet of {{PRODUCT|Sunbright 20L}} drums slipped from racking in aisle 14; worker sustained bruising to the left forearm and was treated on site with {{DRUG|ibuprofen}} and an ice pack, then reviewed at the {{LOCATION|Royal Brisbane and Women's Hospital}}. Supervisor [[P|Connor Whitlam]] notified {{ORG|WorkSafe Queensland}} on {{DATE|4 September}}. Corrective action: racking inspection booked."),
        (A, "On {{DATE|3 September}} a pallet slipped from racking in aisle 14 at {{LOCATION|Eagle Farm}}, bruising a forklift operator's forearm; he was treated on site and reviewed at hospital. A witness statement was taken, {{ORG|WorkSafe Queensland}} was notified the next day, and a racking inspection is booked."),
    ],
    [
        (Q, "The student [[P|Ingrid Solbakken]] says her transcript has the wrong date of birth. What do we have?"),
        (D, "Student record — {{ORG|Northbridge College}}. Student: [[P|Ingrid Solbakken]], ID {{ID|S2210493}}. Programme: {{PRODUCT|BSc Marine Biology}}, year 2. Date of birth on file: [[DOB|1 March 2003]]. Correspondence address: [[A|Storgata 41, 9008 Tromsø, Norway]]. Term address: [[A|Room 214, Fenwick Hall, 3 College Road, Plymouth PL4 6AB]]. Email: [[E|ingrid.solbakken@student.northbridge.example]]. Personal tutor: Dr [[P|Olamide Ferris]]. Registry note {{DATE|12 November}}: student states correct DOB is [[DOB|3 January 2003]]; passport copy requested. Transcript {{ID|TR-55821}} issued {{DATE|1 November}}."),
        (A, "We hold [[DOB|1 March 2003]] as Ms [[P|Solbakken]]'s date of birth, and she says it should be [[DOB|3 January 2003]]. Registry asked for a passport copy on {{DATE|12 November}}; once it's checked, transcript {{ID|TR-55821}} can be reissued."),
    ],
    [
        (Q, "Why can't our developer log into the API console? Her name is [[P|Fenella Arkwright]]."),
        (D, "Auth service log, tenant {{ORG|Arkwright Mills Textiles}}:\n{{DATE|2025-03-18}}T09:14:02Z user=[[E|fen.arkwright@arkwrightmills.example]] name=\"[[P|Fenella Arkwright]]\" action=login result=FAIL reason=mfa_timeout ip=[[IP|198.51.100.126]]\n{{DATE|2025-03-18}}T09:16:44Z user=[[E|fen.arkwright@arkwrightmills.example]] action=login result=FAIL reason=account_locked ip=[[IP|198.51.100.126]]\n{{DATE|2025-03-18}}T09:30:10Z admin=\"[[P|Rajesh Unnikrishnan]]\" action=rotate_key key_id={{ID|kid_7731}} new_secret=[[S|sk_live_4fT9qLz2Wm8RbX1vNc6Ha0Pe]]\nclient={{PRODUCT|Arkwright Console}} {{VERSION|3.8.0}}\nSupport note: the user called the helpdesk at 09:20 and spoke to [[P|Wenonah Blackfeather]], who confirmed her identity by callback to [[T|+44 113 496 0381]] and advised waiting 30 minutes for the automatic unlock. The tenant policy locks an account after two failed MFA prompts within five minutes; admins can lift the lock manually from the user list in the console."),
        (A, "[[P|Fenella Arkwright]]'s account was locked after an MFA timeout at 09:14 on {{DATE|18 March}}. An admin can unlock it from the user list. Note that the API key was also rotated at 09:30, so any scripts using the old key will fail — do not paste the new secret into tickets."),
    ],
    [
        (Q, "Can you tell me what the patient was prescribed at the last visit? It's for Mr [[P|Oduya]]."),
        (D, "Clinic note — {{ORG|Harbourside Medical Centre}}, {{DATE|14 February}}. Patient: Mr [[P|Emeka Oduya]], DOB [[DOB|28/06/1957]], [[A|15 Pilot Street, Whitby YO21 3PT]], tel [[T|01632 960 902]]. Seen by Dr [[P|Hannelore Sjöberg]]. Presenting: persistent cough for three weeks. Plan: chest X-ray at {{LOCATION|Scarborough Hospital}}, start {{DRUG|amoxicillin}} 500 mg three times daily for 7 days, continue {{DRUG|metformin}}. Review in two weeks. Next of kin: [[P|Adaeze Oduya]] (daughter), [[T|07700 900455]]."),
        (A, "At the {{DATE|14 February}} visit Mr [[P|Oduya]] was started on {{DRUG|amoxicillin}} 500 mg three times a day for 7 days, continued his {{DRUG|metformin}}, and was referred for a chest X-ray, with a review two weeks later."),
    ],
]
THREADS += [
    [
        (Q, "Goedemiddag, mijn pakket is nooit aangekomen. Ordernummer {{ID|NL-304418}}, op naam van [[P|Joost van der Kamp]]."),
        (D, "Zendinginformatie ({{ORG|Tulpfiets BV}}): bestelling {{ID|NL-304418}}, klant [[P|Joost van der Kamp]], e-mail [[E|joostvdkamp@webpost.example]], telefoon [[T|+31 6 1234 0918]]. Afleveradres: [[A|Prinsengracht 612-II, 1017 KS Amsterdam]]. Artikel: {{PRODUCT|Tulpfiets Stadsfiets Deluxe}} fietstas, {{PRICE|€59,95}}. Vervoerder {{ORG|PostNL}}, track & trace {{TRACKING_NUMBER|3SKABA008812734}}. Status {{DATE|14-05-2025}}: 'afgeleverd bij buren, huisnummer 610'. Buurvrouw volgens bezorger: [[P|Femke Dijkhuizen]]. Klant belde {{DATE|16-05-2025}} met collega [[P|Sander Wijnaldum]], die een onderzoek heeft gestart. Vervangende zending mogelijk na vijf werkdagen."),
        (A, "Beste [[P|Joost]], volgens {{ORG|PostNL}} is het pakket op {{DATE|14-05-2025}} bij de buren op nummer 610 afgeleverd. Wilt u daar eerst even navragen? Zo niet, dan loopt het onderzoek van [[P|Sander Wijnaldum]] al en sturen we binnen vijf werkdagen een vervanging."),
    ],
    [
        (Q, "Could you check whether [[P|Penny Abernethy]]'s pension transfer went through? She rang twice this week."),
        (D, "Pension transfer case {{ID|PT-77120}} — {{ORG|Greyfriars Pensions}}. Member: [[P|Penny Abernethy]], DOB [[DOB|19 October 1961]], [[NINO|PW 61 42 03 A]]. Address: [[A|Heather View, 3 Glebe Road, Kinross KY13 8BN]]. Transferring scheme: {{ORG|Caldwell & Pryce Staff Pension Scheme}}, value {{PRICE|£84,216.40}}. Request received {{DATE|2 April}}; funds received {{DATE|28 April}}; invested in {{PRODUCT|Greyfriars Balanced Growth Fund}} on {{DATE|30 April}}. Calls logged {{DATE|5 May}} and {{DATE|7 May}} with [[P|Duncan Strachan]]. Phone on file [[T|01577 496 224]]. Confirmation letter drafted, not yet posted."),
        (A, "Yes — [[P|Penny Abernethy]]'s transfer of {{PRICE|£84,216.40}} arrived on {{DATE|28 April}} and was invested on {{DATE|30 April}}. The confirmation letter hasn't been posted yet, which is probably why she's ringing; I'd send it today and give her a quick call."),
    ],
    [
        (Q, "Buongiorno, vorrei sapere quando arriva il tecnico per la caldaia. Sono [[P|Gianluca Pellegrino]]."),
        (D, "Richiesta di intervento {{ID|INT-2025-07731}} — {{ORG|Calore Servizi Srl}}. Cliente: [[P|Gianluca Pellegrino]], [[A|Via Giuseppe Mazzini 84, 40138 Bologna BO]]. Tel. [[T|+39 051 555 0147]]. Apparecchio: {{PRODUCT|Ariston Clas One 24}}, installata {{DATE|2019}}. Guasto segnalato il {{DATE|3 dicembre}}: errore 501, nessuna fiamma. Tecnico assegnato: [[P|Massimo Ferraresi]], appuntamento {{DATE|5 dicembre}} fascia 14:00–18:00. Contratto di manutenzione {{PRODUCT|Comfort Plus}} attivo, intervento gratuito. Pagamenti addebitati su [[IBAN|IT52 X660 4721 2476 2406 9729 222]]."),
        (A, "Buongiorno [[P|Gianluca]], il tecnico [[P|Massimo Ferraresi]] verrà il {{DATE|5 dicembre}} tra le 14:00 e le 18:00. L'intervento è coperto dal contratto {{PRODUCT|Comfort Plus}}, quindi non avrà costi."),
    ],
    [
        (Q, "Please check the fraud alert on the account of [[P|Grace Mwangi-Lindqvist]]."),
        (D, "Fraud monitoring alert {{ID|FA-993016}}, {{DATE|2025-08-09}}. Customer: [[P|Grace Mwangi-Lindqvist]], account {{ID|ACC-4471092}}. Card [[C|4482 6905 9298 1887]] used for 6 transactions in 40 minutes at {{ORG|Elektro Budapest Kft}} and {{ORG|Margit Jewellers}}, total {{PRICE|€2,940}}. Customer's registered address: [[A|Hagagatan 17, 113 48 Stockholm, Sweden]]; mobile [[T|+46 70 555 01 63]]. Device fingerprint mismatch; IP [[IP|203.0.113.188]]. Card blocked automatically. Analyst [[P|Tomasz Wierzbicki]] attempted contact at 11:05, no answer; SMS sent. Replacement card to be sent to registered address once customer confirms."),
        (A, "The alert {{ID|FA-993016}} blocked [[P|Grace Mwangi-Lindqvist]]'s card after six transactions in Budapest totalling {{PRICE|€2,940}} from an unrecognised device. [[P|Tomasz Wierzbicki]] has texted her; once she confirms the transactions weren't hers, we'll raise disputes and post a replacement to [[A|Hagagatan 17, 113 48 Stockholm, Sweden]]."),
    ],
    [
        (Q, "who is the emergency contact for the guest in room 412? the front desk needs it urgently"),
        (D, "Guest profile — {{ORG|The Bramwell Hotel}}, {{LOCATION|Harrogate}}. Room 412, arrival {{DATE|18 October}}, departure {{DATE|21 October}}. Guest: [[P|Cornelius Ashdown-Vale]], home address [[A|Ivy Lodge, 22 Orchard Close, Thame OX9 3HF]], mobile [[T|07700 900816]]. Emergency contact: [[P|Bea Ashdown-Vale]] (wife), [[T|07700 900827]]. Preferences: feather-free pillows, {{PRODUCT|Nespresso}} pods. Loyalty: {{PRODUCT|Bramwell Circle Gold}}. Special note: guest mentioned he takes {{DRUG|warfarin}}. Booking made by PA [[P|Hester Quayle]], [[E|hquayle@ashdownvale-estates.example]]."),
        (A, "The emergency contact for room 412 is [[P|Bea Ashdown-Vale]], his wife, on [[T|07700 900827]]. The guest also noted he takes {{DRUG|warfarin}}, which may be relevant if this is a medical situation."),
    ],
    [
        (Q, "Can you draft a reminder to the parent whose child is missing consent forms for the Year 8 trip?"),
        (D, "School trip tracker — {{ORG|Oakhurst Academy}}, Year 8 trip to the {{LOCATION|Science Museum}}, {{DATE|14 March}}. Outstanding consent: pupil [[P|Jayden Eze-Barnes]], tutor group 8R. Parent: [[P|Chidinma Eze-Nwosu]], [[E|chidinma.ezenwosu@homefamily.example]], [[T|07700 900193]]. Address: [[A|41 Ferndale Crescent, Luton LU3 1NG]]. Payment of {{PRICE|£18.50}} received {{DATE|1 March}}. Medical form also missing (pupil uses an {{DRUG|EpiPen}}). Trip lead: {{JOB_TITLE|Head of Science}} [[P|Graham Penhaligon]]. Deadline for forms: {{DATE|10 March}}."),
        (A, "Dear Ms [[P|Eze-Nwosu]], thank you for paying for [[P|Jayden]]'s trip to the {{LOCATION|Science Museum}} on {{DATE|14 March}}. We still need his consent and medical forms, including details of his {{DRUG|EpiPen}}, by {{DATE|10 March}}. Kind regards, [[P|Graham Penhaligon]], {{JOB_TITLE|Head of Science}}."),
    ],
    [
        (Q, "What's the outstanding balance on the [[P|Ellingham]] account and can we offer a payment plan?"),
        (D, "Collections record {{ID|COL-55813}} — {{ORG|Brightline Broadband}}. Customer: [[P|Summer Ellingham]], account name '[[P|Ellingham]] household'. Service address: [[A|Flat 2, 9 Belvedere Terrace, Brighton BN1 3AF]]. Phone [[T|01273 960 514]]. Package {{PRODUCT|Fibre 500 + TV Essentials}}. Arrears {{PRICE|£238.17}} (three missed payments since {{DATE|February}}). Customer note, {{DATE|12 May}}: lost job in January, now working part-time at {{ORG|Hove Garden Centre}}. Vulnerability flag added by [[P|Kwabena Sarpong-Duah]]. Policy: plans up to 12 months available for flagged customers."),
        (A, "The balance is {{PRICE|£238.17}} from three missed payments. Because [[P|Summer Ellingham]] has a vulnerability flag, we can offer a plan of up to 12 months — for example about {{PRICE|£20}} a month on top of her normal bill."),
    ],
    [
        (Q, "Check-in failed for passenger [[P|Ayşe Karaca]] on flight {{ID|EW-2291}}, can you see why?"),
        (D, "Departure control record. Flight {{ID|EW-2291}} {{LOCATION|Düsseldorf}}–{{LOCATION|Antalya}}, {{DATE|27 July}}. PNR {{ID|K7QZ2M}}. Passenger 1: [[P|Ayşe Karaca]], DOB [[DOB|05.09.1988]], passport expiry {{DATE|02.08.2025}}. Passenger 2: [[P|Emir Karaca]] (child), DOB [[DOB|11.02.2017]]. Contact: [[E|ayse.karaca@mailbox.example]], [[T|+49 211 555 0139]]. Address: [[A|Kölner Straße 212, 40227 Düsseldorf]]. Check-in error: passport must be valid six months beyond travel for destination. Agent [[P|Dilara Şahin]] advised passenger to contact the consulate for an emergency passport."),
        (A, "Online check-in for [[P|Ayşe Karaca]] failed because her passport expires on {{DATE|02.08.2025}}, less than six months after travel, which the destination requires. She'll need a new or emergency passport before {{DATE|27 July}}; [[P|Emir]]'s documents are fine."),
    ],
    [
        (Q, "Customer asking about warranty on a fridge bought at the {{LOCATION|Hargreave Street}} branch."),
        (D, "Warranty lookup — {{ORG|Dunmore & Pike Appliances}}. Purchase: {{PRODUCT|Frostline FL-620 American Fridge Freezer}}, SKU {{SKU|FL620-SS-UK}}, {{PRICE|£1,099.00}}, {{DATE|23 November 2023}}, {{LOCATION|Hargreave Street}} branch, {{LOCATION|Sheffield}}. Customer: [[P|Eustace Mbatha]], [[A|88 Abbeydale Park Rise, Sheffield S17 3PB]], [[T|0114 496 0733]]. Extended warranty {{PRODUCT|CareGuard 3}} purchased, expires {{DATE|22 November 2026}}. Previous repair {{DATE|August 2024}}: compressor relay, engineer [[P|Rory McAllister]]. Fault reported now: freezer not cold, ice maker leaking."),
        (A, "Mr [[P|Mbatha]]'s fridge is covered by {{PRODUCT|CareGuard 3}} until {{DATE|22 November 2026}}, so the repair is free. Book an engineer visit; note the compressor relay was replaced in {{DATE|August 2024}}, in case it's the same fault."),
    ],
    [
        (Q, "We got a letter from a customer about a parking fine at our car park. Can you summarise it?"),
        (D, "Dear Sir or Madam,\nI am writing about parking charge notice {{ID|PCN 4471-9983}} issued on {{DATE|3 January}} at your {{LOCATION|Castle Quarter}} car park in {{LOCATION|Cardiff}}. I paid for two hours using the {{PRODUCT|ParkEasy}} app but the machine recorded my registration incorrectly. I attach the app receipt showing {{PRICE|£4.20}} paid at 10:12. Please cancel the charge of {{PRICE|£100}}.\nYours faithfully,\n[[P|Gwenllian Rees-Haverford]]\n[[A|14 Heol y Delyn, Lisvane, Cardiff CF14 0SQ]]\n[[E|gwen.reeshaverford@cymru-mail.example]]"),
        (A, "The customer says she paid {{PRICE|£4.20}} via {{PRODUCT|ParkEasy}} on {{DATE|3 January}}, but her registration was recorded wrongly, and asks us to cancel {{ID|PCN 4471-9983}}. If the app receipt matches, the {{PRICE|£100}} charge should be cancelled."),
    ],
    [
        (Q, "Can you find the delivery address for the wholesale order from Mr [[P|Bill Tranter]]?"),
        (D, "Wholesale order {{ID|WH-10294}} — {{ORG|Tranter's Farm Shop}}. Buyer: [[P|Bill Tranter]], owner. Delivery: [[A|Lower Combe Farm, Combe Lane, Chudleigh, Newton Abbot TQ13 0DL]]. Invoice address: same. Contact: [[T|01626 496 048]], [[E|orders@tranters-farmshop.example]]. Items: 40 × {{PRODUCT|Dartmoor Heather Honey 340g}} ({{SKU|DHH-340}}), 24 × {{PRODUCT|Clotted Cream Fudge}} ({{SKU|CCF-200}}). Total {{PRICE|£412.80}}, terms 30 days. Please {{WORD|bill}} to account {{ID|TRF-0081}}. Courier {{ORG|Pellow Transport}} booked for {{DATE|Thursday 9 May}}. Driver note from [[P|Ruby Pellow]]: narrow lane, use rear yard gate."),
        (A, "The order {{ID|WH-10294}} goes to [[A|Lower Combe Farm, Combe Lane, Chudleigh, Newton Abbot TQ13 0DL]]; the driver should use the rear yard gate as the lane is narrow. Delivery is booked for {{DATE|Thursday 9 May}}."),
    ],
    [
        (Q, "Paciente pede a segunda via do recibo da consulta. Nome: [[P|Maria do Rosário Cardoso]]."),
        (D, "Registo de consulta — {{ORG|Clínica Dentária Sorriso Atlântico}}, {{LOCATION|Lisboa}}. Paciente: [[P|Maria do Rosário Cardoso]], data de nascimento [[DOB|23/08/1975]]. NIF: {{ID|fornecido no balcão}}. Morada: [[A|Avenida de Roma 47, 4.º Dto., 1700-343 Lisboa]]. Telemóvel: [[T|+351 912 555 083]]. Consulta {{DATE|10/06/2025}} com a Dra. [[P|Inês Valadares]]: destartarização e consulta de rotina, {{PRICE|65,00 €}}. Pagamento por transferência de [[IBAN|PT53 0906 7819 2267 1508 8541 9]]. Recibo {{ID|FR 2025/1183}} emitido. Email para envio: [[E|mrosario.cardoso@correio-pt.example]]."),
        (A, "Olá, vou reenviar o recibo {{ID|FR 2025/1183}} da consulta de {{DATE|10/06/2025}} ({{PRICE|65,00 €}}) para [[E|mrosario.cardoso@correio-pt.example]]. Deve chegar dentro de alguns minutos."),
    ],
]
THREADS += [
    [
        (Q, "Customer [[P|Marguerite Lapointe]] moved from {{LOCATION|Montréal}} to {{LOCATION|Ottawa}} — has her address been updated on all policies?"),
        (D, "Policy holder summary — {{ORG|Laurentian Mutual}}. Name: [[P|Marguerite Lapointe]]. Previous address: [[A|4520 rue Saint-Denis, app. 3, Montréal QC H2J 2L3]]. New address (effective {{DATE|1 August}}): [[A|88 Clarence Street, Unit 1204, Ottawa ON K1N 5P9]]. Phone [[T|(613) 555-0162]]. Policies: home {{ID|HO-6612048}} (updated {{DATE|29 July}} by [[P|Étienne Bouchard]]); auto {{ID|AU-6612049}} (still shows previous address); travel {{PRODUCT|Laurentian Snowbird Plan}} {{ID|TR-6612050}} (still shows previous address). Vehicle garaged at {{LOCATION|ByWard Market}} parking. Agent note: customer also asked to add spouse [[P|Réjean Tremblay-Lapointe]] as second driver."),
        (A, "Only the home policy {{ID|HO-6612048}} has the new Ottawa address. The auto {{ID|AU-6612049}} and travel {{ID|TR-6612050}} policies still show [[A|4520 rue Saint-Denis, app. 3, Montréal QC H2J 2L3]] and need updating to [[A|88 Clarence Street, Unit 1204, Ottawa ON K1N 5P9]]; the second-driver request for [[P|Réjean Tremblay-Lapointe]] is also pending."),
    ],
    [
        (Q, "A courier returned two parcels for the same customer. What addresses did we try?"),
        (D, "Returned shipments report, {{ORG|Pacifica Homewares}}, week 32.\n1. Order {{ID|PH-551073}}, recipient [[P|Mere Tūhoe-Walker]], [[A|17 Kowhai Street, Grey Lynn, Auckland 1021]], carrier {{ORG|NZ Post}}, tracking {{TRACKING_NUMBER|LZ774120938NZ}}, reason: no such number.\n2. Order {{ID|PH-551098}}, recipient [[P|Mere Tūhoe-Walker]], [[A|PO Box 4471, Ponsonby, Auckland 1144]], tracking {{TRACKING_NUMBER|LZ774121455NZ}}, reason: box closed.\nCustomer contact: [[T|021 555 0948]], [[E|mere.tw@kiwimail.example]]. Items: {{PRODUCT|Harakeke woven basket set}} and {{PRODUCT|Nīkau linen throw}}, total {{PRICE|NZ$214.00}}. CS agent [[P|Jarrah Kingsley]] emailed the customer on {{DATE|12 August}}."),
        (A, "We tried [[A|17 Kowhai Street, Grey Lynn, Auckland 1021]] (courier said no such number) and [[A|PO Box 4471, Ponsonby, Auckland 1144]] (box closed). [[P|Jarrah Kingsley]] has emailed [[P|Mere Tūhoe-Walker]] to confirm a correct address before reshipping."),
    ],
    [
        (Q, "Please verify the identity details for a new savings account: [[P|Siddharth Raghavan-Pillai]]."),
        (D, "KYC check result (provider {{ORG|VeriTrust}}, {{DATE|2025-10-02}}): {\"applicant\": \"[[P|Siddharth Raghavan-Pillai]]\", \"dob\": \"[[DOB|1984-01-26]]\", \"address\": \"[[A|Flat 5B, Tower 2, Prestige Shantiniketan, Whitefield, Bengaluru 560048]]\", \"previous_address\": \"[[A|12 Orchard Road, #08-03, Singapore 238826]]\", \"mobile\": \"[[T|+91 98450 55017]]\", \"email\": \"[[E|sid.rpillai@finmail.example]]\", \"document\": \"passport\", \"document_match\": true, \"address_match\": \"partial\", \"pep\": false, \"sanctions\": false, \"reviewer\": \"[[P|Anjali Deshmukh]]\", \"product\": \"{{PRODUCT|GlobalSaver e-Account}}\", \"notes\": \"address on the utility bill supplied does not match the current address given; applicant says he relocated from Singapore in March and the lease is in his spouse's name, [[P|Kavya Raghavan-Pillai]]; request a bank statement or employer letter dated within the last three months\", \"risk_score\": 22, \"next_step\": \"manual review\"}"),
        (A, "The identity check for [[P|Siddharth Raghavan-Pillai]] passed on the passport and sanctions screening, but the address only partially matched. Ask him for a recent utility bill or bank statement showing the Bengaluru address before opening the {{PRODUCT|GlobalSaver e-Account}}."),
    ],
    [
        (Q, "Our recruiter wants a summary of candidate [[P|Rowan Achebe-Lund]]'s application."),
        (D, "Candidate profile — requisition {{ID|REQ-3317}}, {{JOB_TITLE|Head of Customer Experience}}, {{ORG|Fairbairn Insurance}}. Candidate: [[P|Rowan Achebe-Lund]]. Contact: [[E|rowan.al@proton-like.example]], [[T|+44 7700 900671]]. Address: [[A|3 Sycamore Mews, Clifton, Bristol BS8 4QE]]. Current role: {{JOB_TITLE|Director of Service Operations}} at {{ORG|Mercer & Holt Utilities}} (6 years). Salary expectation {{PRICE|£95,000}}. Notice period: 3 months. Referees: [[P|Beatrix Onwuachi]] (former manager), [[P|Lorcan Devereux]] (peer). Interview panel: [[P|Halima Yusuf-Barre]], [[P|Jonty Marsh]]. Stage: second interview {{DATE|22 May}}."),
        (A, "[[P|Rowan Achebe-Lund]] is currently a {{JOB_TITLE|Director of Service Operations}} at {{ORG|Mercer & Holt Utilities}}, expects {{PRICE|£95,000}}, has three months' notice, and has a second interview on {{DATE|22 May}} with [[P|Halima Yusuf-Barre]] and [[P|Jonty Marsh]]."),
    ],
    [
        (Q, "tenant says the heating's been off for 3 days at the Rosebank flats, what's happening"),
        (D, "Maintenance log — {{ORG|Rosebank Housing Co-operative}}, block B, {{LOCATION|Rosebank Road}}.\n{{DATE|10 Jan}} 07:40 — boiler lockout reported by [[P|Rose Mbeki]], [[A|Flat 14, Rosebank House, 210 Rosebank Road, Glasgow G40 4EN]], [[T|0141 496 0219]].\n{{DATE|10 Jan}} 12:15 — engineer [[P|Niall Harkins]] ({{ORG|Clydeside Heating}}) attended; faulty pump, part ordered.\n{{DATE|11 Jan}} — part delayed by supplier {{ORG|Grundfos}} distributor.\n{{DATE|12 Jan}} — electric heaters delivered to 6 flats, including flat 9 ([[P|Arturo Villanueva]]) and flat 14.\n{{DATE|13 Jan}} 09:00 — part expected; fitting scheduled for the afternoon."),
        (A, "The block's boiler pump failed on {{DATE|10 Jan}} and the replacement part was delayed. Electric heaters were delivered on {{DATE|12 Jan}}, and the new part should be fitted this afternoon, {{DATE|13 Jan}}. Let the tenant know heating should be back tonight."),
    ],
    [
        (Q, "Can you look up why Mr [[P|Xu]]'s visa fee payment is pending?"),
        (D, "Payment record — {{ORG|Global Visa Services Centre}}. Applicant: [[P|Xu Haoran]], passport {{ID|provided}}, DOB [[DOB|12 December 1990]]. Application {{ID|GVS-2025-881204}}, visa type {{PRODUCT|Standard Visitor 6 months}}. Fee {{PRICE|£127.00}} paid by card [[C|5362 7186 8543 1213]] on {{DATE|30 April}}; status PENDING (bank authorisation not returned). Applicant address: [[A|Room 1802, Building 3, 55 Zhongshan Road, Xuhui District, Shanghai 200030]]. Email [[E|haoran.xu@postbox-cn.example]]. Agent [[P|Charlotte Bellweather]] contacted the acquirer on {{DATE|2 May}}. Biometrics appointment at {{LOCATION|Shanghai visa centre}} on {{DATE|9 May}}."),
        (A, "Mr [[P|Xu Haoran]]'s {{PRICE|£127.00}} payment is pending because his bank hasn't returned the authorisation. [[P|Charlotte Bellweather]] chased the acquirer on {{DATE|2 May}}; if it's not resolved by {{DATE|9 May}}, he may need to pay again before his biometrics appointment."),
    ],
    [
        (Q, "A customer complained on the phone that she was overcharged on her phone contract. Her number is [[T|07700 900392]]."),
        (D, "Mobile account — {{ORG|Skylark Mobile}}. Account holder: [[P|Marigold Featherstonehaugh]]. Number [[T|07700 900392]]. Billing address: [[A|The Coach House, 11 Priory Walk, Tewkesbury GL20 5AY]]. Plan {{PRODUCT|Skylark Unlimited 5G}} at {{PRICE|£24.00}}/month, contract ends {{DATE|March 2026}}. Last bill {{PRICE|£61.48}} including roaming charges in {{LOCATION|Morocco}} ({{PRICE|£37.48}}). Roaming bundle {{PRODUCT|Roam Further}} was not active. Call note {{DATE|3 September}} by [[P|Dougal Pritchard]]: customer says she was told by a store employee at {{LOCATION|Cheltenham}} that Morocco was included. Goodwill credit allowed up to {{PRICE|£20}}."),
        (A, "The extra {{PRICE|£37.48}} on [[P|Marigold Featherstonehaugh]]'s bill is roaming in {{LOCATION|Morocco}}, which isn't included in {{PRODUCT|Skylark Unlimited 5G}}. As she was given wrong advice in store, you can apply a goodwill credit of up to {{PRICE|£20}}."),
    ],
    [
        (Q, "What happened with the delivery to Herr [[P|Brückner]]? He says the sofa was damaged."),
        (D, "Lieferprotokoll {{ID|LP-2025-33871}} — {{ORG|Wohnwerk Möbel GmbH}}. Kunde: [[P|Konstantin Brückner]], [[A|Am Hirschgarten 5, 80639 München]], Tel. [[T|+49 89 555 01736]]. Artikel: {{PRODUCT|Sofa Lugano 3-Sitzer}}, {{SKU|LUG-3S-ANTH}}, {{PRICE|1.499,00 €}}. Zustellung am {{DATE|21.11.2025}} durch Spedition {{ORG|Hofmann Logistik}}, Fahrer [[P|Dragan Petrović]]. Kunde hat Riss im Bezug an der linken Armlehne auf dem Lieferschein vermerkt. Fotos per E-Mail von [[E|k.brueckner@mailhaus.example]] erhalten. Reklamation angelegt von [[P|Sabine Kühnert]]; Austauschbezug bestellt, Lieferzeit ca. drei Wochen."),
        (A, "Herr [[P|Brückner]] hat den Riss an der Armlehne bei der Lieferung am {{DATE|21.11.2025}} auf dem Lieferschein vermerkt und Fotos geschickt. [[P|Sabine Kühnert]] hat die Reklamation angelegt und einen Austauschbezug bestellt, der in etwa drei Wochen kommt."),
    ],
    [
        (Q, "Pull up the council tax account for [[A|6 Linnet Way]], please — resident [[P|Bartholomew Oyinlola]]."),
        (D, "Council tax account {{ID|CT-40018872}} — {{ORG|Wealdhaven District Council}}. Property: [[A|6 Linnet Way, Crowborough TN6 2XL]], band D. Liable persons: [[P|Bartholomew Oyinlola]] and [[P|Felicity Oyinlola]]. Annual charge {{PRICE|£2,286.44}}; paid by instalments via Direct Debit on the 1st. Single person discount removed {{DATE|1 April}} when [[P|Felicity Oyinlola]] moved in. Forwarding address for previous resident [[P|Norbert Szymański]]: [[A|Flat 3, 77 London Road, Tunbridge Wells TN1 1DX]]. Officer [[P|Yvette Cromarty]] noted a query about the Warm Home Discount from {{ORG|Southern Weald Energy}}."),
        (A, "The account {{ID|CT-40018872}} for [[A|6 Linnet Way]] is band D at {{PRICE|£2,286.44}} a year, paid by Direct Debit. The single person discount ended on {{DATE|1 April}} when a second adult moved in, which explains the higher instalments."),
    ],
    [
        (Q, "Hi, can you tell me if my prescription is ready to collect? DOB [[DOB|4 June 1972]], name [[P|Hope Adeyemi-Stone]]"),
        (D, "Pharmacy system — {{ORG|Cloverleaf Pharmacy}}, {{LOCATION|Kings Heath}} branch. Patient: [[P|Hope Adeyemi-Stone]], DOB [[DOB|04/06/1972]], address [[A|19 Vicarage Road, Kings Heath, Birmingham B14 7QA]], tel [[T|0121 496 0588]]. Prescription {{ID|RX-7783015}} from Dr [[P|Saoirse Brannigan]], received electronically {{DATE|17 June}}: {{DRUG|sertraline}} 50 mg × 28, {{DRUG|omeprazole}} 20 mg × 28. Status: {{DRUG|sertraline}} dispensed and bagged; {{DRUG|omeprazole}} out of stock, owing slip issued, expected {{DATE|19 June}}. Collection point: counter 2. Pharmacist on duty: [[P|Tunde Bakare]]."),
        (A, "Hi Ms [[P|Adeyemi-Stone]], your {{DRUG|sertraline}} is ready to collect at {{LOCATION|Kings Heath}}. The {{DRUG|omeprazole}} is out of stock and expected on {{DATE|19 June}}; we'll give you an owing slip so you can pick it up then."),
    ],
    [
        (Q, "Need the shipping details for the B2B order to the Osaka client, they say the invoice address is wrong."),
        (D, "Order {{ID|EXP-20931}} — {{ORG|Nordvik Instruments AB}} to {{ORG|Kansai Precision Co., Ltd.}} Contact: [[P|Takahashi Yumiko]], {{JOB_TITLE|purchasing manager}}, [[E|y.takahashi@kansai-precision.example]], [[T|+81 6 5555 0184]]. Ship to: [[A|2-14-7 Nishi-Honmachi, Nishi-ku, Osaka 550-0005]]. Invoice to (as entered): [[A|3-1-22 Umeda, Kita-ku, Osaka 530-0001]]. Items: 4 × {{PRODUCT|NV-300 Laser Distance Sensor}}, {{PRICE|SEK 86,400}}. Incoterms DAP. Entered by [[P|Linnea Håkansson]] on {{DATE|4 November}}. Forwarder {{ORG|Scan-Asia Freight}}, AWB {{TRACKING_NUMBER|176-44872915}}."),
        (A, "The order {{ID|EXP-20931}} ships to the Nishi-ku address, and the invoice was set to [[A|3-1-22 Umeda, Kita-ku, Osaka 530-0001]]. Ask [[P|Takahashi Yumiko]] for the correct invoice address and [[P|Linnea Håkansson]] can reissue the invoice."),
    ],
    [
        (Q, "can u check if my gym membership freeze went thru? im [[P|Sunny Okoro]]"),
        (D, "Member record — {{ORG|PulseFit}} {{LOCATION|Croydon}}. Member: [[P|Sunny Okoro]] (legal name [[P|Sunday Okoroafor]]), member no. {{ID|PF-0091283}}. Address: [[A|Flat 4, 62 Wellesley Road, Croydon CR0 2AD]]. Mobile [[T|07700 900705]]. Membership {{PRODUCT|PulseFit Off-Peak}} {{PRICE|£24.99}}/month. Freeze requested {{DATE|2 October}} for three months (medical: knee surgery at {{LOCATION|Croydon University Hospital}}). Freeze approved by club manager [[P|Delphine Okwuosa]] {{DATE|4 October}}, effective from the {{DATE|November}} payment. October fee already collected."),
        (A, "yes, the freeze for [[P|Sunday Okoroafor]]'s membership was approved on {{DATE|4 October}} and starts with your {{DATE|November}} payment, so nothing more will be taken for three months. the October fee was already collected before the freeze. hope the knee recovery goes well!"),
    ],
    [
        (Q, "Can you confirm the contractor's payment details before we pay invoice {{ID|2025-118}}?"),
        (D, "Supplier master data — {{ORG|Vos & Dekker Bouw}}. Contact person: [[P|Marloes Vos]], {{JOB_TITLE|eigenaar}}. Address: [[A|Industrieweg 44, 3542 AD Utrecht]]. KvK {{ID|30219874}}. Bank: [[IBAN|NL68 RABO 7098 7257 75]]. Change request received {{DATE|3 February}} by email from [[E|finance@vos-dekker-bouw.example]] asking to switch payments to [[IBAN|NL43 INGB 5387 0272 33]]. Call-back verification by [[P|Pieter Hoogendijk]] on {{DATE|4 February}}: [[P|Marloes Vos]] confirmed she did NOT send this request. Flagged as suspected invoice fraud; change rejected."),
        (A, "Pay invoice {{ID|2025-118}} only to the original account, [[IBAN|NL68 RABO 7098 7257 75]]. The request to switch to a different account was confirmed as fraudulent when [[P|Pieter Hoogendijk]] called [[P|Marloes Vos]] back, and it was rejected."),
    ],
]
THREADS += [
    [
        (Q, "A customer disputes a charge from our online store. Can you pull the order for card ending 1768?"),
        (D, "Chargeback notice {{ID|CB-2025-04417}} from acquirer, {{DATE|14 August}}. Cardholder: [[P|Delroy Fitzgerald-Baptiste]]. Card: [[C|5589 0079 4402 1768]]. Merchant: {{ORG|Copperleaf Kitchenware}}. Amount {{PRICE|$312.95}}. Reason code 13.1 (merchandise not received). Order {{ID|CK-88104}}: {{PRODUCT|Copperleaf 10-piece Tri-Ply Set}}, shipped {{DATE|July 22}} via {{ORG|UPS}}, tracking {{TRACKING_NUMBER|1Z9X44E80391847712}}, delivered {{DATE|July 25}} to [[A|3318 Magnolia Avenue, Unit B, Long Beach, CA 90806]], signed by 'B. FITZGERALD'. Billing address: [[A|1470 Ocean Boulevard, Apt 9C, Long Beach, CA 90802]]. Customer phone [[T|(562) 555-0133]]. Response due {{DATE|August 28}}."),
        (A, "Order {{ID|CK-88104}} was delivered on {{DATE|July 25}} to [[A|3318 Magnolia Avenue, Unit B, Long Beach, CA 90806]] with a signature, which differs from the billing address. Submit the proof of delivery and signature to the acquirer before {{DATE|August 28}}."),
    ],
    [
        (Q, "Member asks whether her physiotherapy sessions are covered. Policy holder is [[P|Kalena Kahalewai]]."),
        (D, "Health plan benefits lookup — {{ORG|Harbor Crest Health}}. Member: [[P|Kalena Kahalewai]], member ID {{ID|HCH-55201987}}, DOB [[DOB|07/19/1983]]. SSN on file: [[SSN|547-83-1096]]. Address: [[A|94-1024 Waipahu Street, Waipahu, HI 96797]]. Plan {{PRODUCT|Harbor Crest Silver PPO}}. Physical therapy: 20 visits/year, {{PRICE|$30}} copay in network; 6 visits used. Referring provider: Dr [[P|Kenta Morimoto]]. Therapist: [[P|Ashleigh Duvall]], {{ORG|Ewa Beach Physical Therapy}} (in network). Prior authorization required after visit 12. Member phone [[T|(808) 555-0116]]."),
        (A, "Yes — [[P|Kalena Kahalewai]]'s plan covers 20 physical therapy visits a year with a {{PRICE|$30}} copay in network, and she has used 6. Her therapist's practice is in network; prior authorization will be needed after visit 12."),
    ],
    [
        (Q, "Salut, j'ai un souci avec mon abonnement de train, il a été débité deux fois. [[P|Anaïs Verbruggen]]"),
        (D, "Dossier client {{ORG|Rail Express Benelux}}. Cliente : [[P|Anaïs Verbruggen]], [[A|Rue de la Station 31, bte 4, 1300 Wavre]], Belgique. Téléphone : [[T|+32 10 55 01 94]]. Abonnement {{PRODUCT|Navetteur Wavre–Bruxelles-Central}}, {{PRICE|94,60 €}}/mois. Prélèvements du {{DATE|1er septembre}} : deux débits de {{PRICE|94,60 €}} sur le compte [[IBAN|BE06 8251 6212 3543]]. Cause : double mandat SEPA créé lors du changement de gare de départ depuis {{LOCATION|Ottignies}}. Agent [[P|Wouter Claessens]] a annulé le deuxième mandat le {{DATE|3 septembre}} ; remboursement en cours."),
        (A, "Bonjour [[P|Anaïs]], le double débit vient d'un mandat créé en double lors de votre changement de gare. [[P|Wouter Claessens]] l'a annulé le {{DATE|3 septembre}} et les {{PRICE|94,60 €}} vous seront remboursés sous quelques jours."),
    ],
    [
        (Q, "Write a short note for the file on the landlord dispute at {{LOCATION|Pemberton Street}}."),
        (D, "Email from [[E|a.lindgren-hale@lettersbox.example]] to {{ORG|Citywide Tenancy Advice}}, {{DATE|4 April}}:\n'Hello, my name is [[P|Astrid Lindgren-Hale]] and I rent [[A|Flat 1, 23 Pemberton Street, Nottingham NG7 3DT]]. My landlord, [[P|Reginald Opoku]], is keeping my deposit of {{PRICE|£975}} for \"cleaning\" even though I have the check-out report. The deposit was protected with {{ORG|SafeNest Deposits}}, reference {{ID|SND-0044827}}. His address for notices is [[A|Longmeadow, 2 Fosse Road, Radcliffe-on-Trent NG12 2BU]]. I can be reached on [[T|0115 496 0647]]. Thank you.'"),
        (A, "Note: the tenant at [[A|Flat 1, 23 Pemberton Street, Nottingham NG7 3DT]] disputes the landlord keeping her {{PRICE|£975}} deposit for cleaning despite a clean check-out report. Deposit protected under {{ID|SND-0044827}}; advise her to open a dispute with {{ORG|SafeNest Deposits}}."),
    ],
    [
        (Q, "Which engineer was sent to the router fault for account {{ID|ISP-77231}} and what did they find?"),
        (D, "Field service ticket {{ID|FS-220417}} — account {{ID|ISP-77231}}, {{ORG|Alpenlink Telecom}}. Customer: [[P|Reto Zimmerli]], [[A|Bahnhofstrasse 58, 8001 Zürich]]. Phone [[T|+41 44 555 01 27]]. Device {{PRODUCT|Alpenlink Box 7}}, firmware {{VERSION|7.57}}. WAN IP [[IP|203.0.113.211]]. Engineer: [[P|Lorenzo Bernasconi]], visit {{DATE|17.03.2025}}. Findings: corroded connector in the building's basement distribution box; replaced. Router admin password reset to [[S|tR8!vmQ2-Lx7pZ]] and given to customer in person. Second visit not required. Customer's neighbour [[P|Ursula Hänggi]] at [[A|Bahnhofstrasse 60, 8001 Zürich]] reported the same fault."),
        (A, "[[P|Lorenzo Bernasconi]] visited on {{DATE|17.03.2025}} and found a corroded connector in the building's basement distribution box, which he replaced. No second visit is needed; the neighbour's identical fault was probably the same cause."),
    ],
    [
        (Q, "Our travel desk needs the hotel confirmations for the {{LOCATION|Lisbon}} offsite attendees."),
        (D, "Group booking {{ID|GRP-8820}} — {{ORG|Hotel Miradouro Lisboa}}, {{DATE|6–9 October}}. Organiser: [[P|Fiona MacGillivray]], {{ORG|Tessellate Software}}. Rooming list:\n- [[P|Oluwaseun Adeyinka]] — confirmation {{ID|HML-44102}}\n- [[P|Björn Ekström]] — confirmation {{ID|HML-44103}}\n- [[P|Paz Montenegro]] — confirmation {{ID|HML-44104}}\n- [[P|Hiroshi Tanabe]] — confirmation {{ID|HML-44105}}\nGuarantee card: [[C|3717 666759 85896]] (corporate {{PRODUCT|Amex}}). Rate {{PRICE|€168}} per night incl. breakfast. Billing address: [[A|Tessellate Software Ltd, 5th Floor, 20 Finsbury Circus, London EC2M 7EB]]. Cancellation free until {{DATE|22 September}}. Contact: [[E|f.macgillivray@tessellate.example]]."),
        (A, "All four rooms are confirmed: {{ID|HML-44102}} to {{ID|HML-44105}} for {{DATE|6–9 October}} at {{PRICE|€168}} a night with breakfast. Free cancellation runs until {{DATE|22 September}}; [[P|Fiona MacGillivray]] is the organiser contact."),
    ],
    [
        (Q, "hi im trying to reset my password for the student portal but the email never comes, my name is [[P|tadhg ó conghaile]]"),
        (D, "Identity service record — {{ORG|Dún Laoghaire Institute}}. User: [[P|Tadhg Ó Conghaile]], student no. {{ID|D00418273}}. Recovery email: [[E|tadhg.oconghaile@studentmail.example]] (bouncing since {{DATE|2 February}}: mailbox full). Alternative email on file: none. Mobile [[T|+353 85 555 0164]]. Home address: [[A|14 Sallynoggin Road, Dún Laoghaire, Co. Dublin A96 K2P1]]. Last successful login {{DATE|30 January}} from [[IP|192.0.2.166]]. MFA app: {{PRODUCT|Microsoft Authenticator}}. Helpdesk technician [[P|Orla Geoghegan]] can issue a temporary code: [[S|8842-KQTV-19]]."),
        (A, "hi [[P|tadhg]], the reset email is bouncing because the recovery mailbox is full. clear some space or call the helpdesk — [[P|Orla Geoghegan]] can verify you by phone and issue a temporary code."),
    ],
    [
        (Q, "Please summarise the complaint against our driver from yesterday."),
        (D, "Complaint {{ID|CMP-30991}}, {{ORG|Swiftline Couriers}}, received {{DATE|11 June}} via web form.\nName: [[P|Ignatius Oyelowo-Park]]\nAddress: [[A|Maple House, 7 Birch Grove, Didsbury, Manchester M20 6RL]]\nEmail: [[E|ignatius.op@greenmail.example]]\nComplaint: 'Your driver left my parcel on the doorstep in the rain even though I was home. The {{PRODUCT|Kindle Paperwhite}} inside is damaged. The tracking ({{TRACKING_NUMBER|SWL0042281937}}) says \"handed to resident\", which is false.'\nDriver on route: [[P|Kacper Nowicki]], van {{ID|MN-114}}. Route supervisor: [[P|Jade Winterbottom]]."),
        (A, "The customer says our driver left his parcel on the doorstep in the rain while he was home, damaging the {{PRODUCT|Kindle Paperwhite}} inside, and that the tracking falsely says 'handed to resident'. [[P|Jade Winterbottom]] should review the driver's delivery photo for {{TRACKING_NUMBER|SWL0042281937}}."),
    ],
    [
        (Q, "A caller says she's the daughter of our client Mr [[P|Gruffudd]] and wants his account balance. Can I tell her?"),
        (D, "Client file — {{ORG|Menai Savings & Loans}}. Client: [[P|Idris Gruffudd]], DOB [[DOB|02/03/1939]], [[A|Tŷ Gwyn, Lôn Isaf, Menai Bridge LL59 5LS]]. Account {{ID|SAV-00183349}}, {{PRODUCT|Easy Access Saver}}. Authorities on file: Lasting Power of Attorney registered {{DATE|18 May 2023}} naming [[P|Carys Gruffudd-Owen]] (daughter), [[T|01248 496 071]], [[A|5 Ffordd y Coleg, Bangor LL57 2EE]]. No other third-party mandates. Security questions: memorable place. Branch: {{LOCATION|Llangefni}}. Relationship manager [[P|Gethin Prydderch]]."),
        (A, "Only if she is [[P|Carys Gruffudd-Owen]], the attorney named in the registered Lasting Power of Attorney, and passes security. Otherwise no information can be shared about Mr [[P|Gruffudd]]'s account."),
    ],
    [
        (Q, "Why was the shipment to the {{LOCATION|Melbourne}} customer held at customs?"),
        (D, "Customs hold notice — {{ORG|Australian Border Force}} via broker {{ORG|Kestrel Customs Brokers}}. Consignment {{TRACKING_NUMBER|AU7740193822}} from {{ORG|Lindqvist Outdoor AB}}. Consignee: [[P|Matilda Huong Nguyen]], [[A|Unit 4, 27 Sydney Road, Brunswick VIC 3056]], [[T|03 5550 1972]], [[E|matilda.hn@ozmail.example]]. Contents: 2 × {{PRODUCT|Fjällvind Down Jacket}}, declared {{PRICE|AUD 1,120}}. Hold reason: goods over {{PRICE|AUD 1,000}} need a full import declaration; duties and GST payable. Broker contact [[P|Callum Achterstraat]] sent payment link on {{DATE|9 May}}."),
        (A, "It's held because the declared value of {{PRICE|AUD 1,120}} is over the {{PRICE|AUD 1,000}} threshold, so duties and GST are due. The broker sent [[P|Matilda Huong Nguyen]] a payment link on {{DATE|9 May}}; once she pays, it will be released."),
    ],
    [
        (Q, "Can you check the background check status for our new security officer, [[P|Darnell Whitfield]]?"),
        (D, "Screening report — {{ORG|Sentinel Screening LLC}} for {{ORG|Keystone Property Management}}. Candidate: [[P|Darnell Whitfield]], DOB [[DOB|March 8, 1992]], SSN [[SSN|318-62-4475]]. Current address: [[A|5527 N Kenmore Ave, Apt 2, Chicago, IL 60640]]; previous: [[A|812 Garfield Street, Gary, IN 46402]]. Position: {{JOB_TITLE|Security Officer}}. Criminal: clear. Employment verification: {{ORG|Lakefront Security Services}} confirmed; {{ORG|Walgreen Distribution}} pending. Licence: {{ID|PERC 129.448812}} valid. Analyst [[P|Imelda Rosales]]. Expected completion {{DATE|June 14}}."),
        (A, "[[P|Darnell Whitfield]]'s criminal check is clear and his licence is valid. One employment verification is still pending, with completion expected by {{DATE|June 14}}."),
    ],
    [
        (Q, "Kunde möchte seine Lastschrift ändern, hat aber die Kontonummer am Telefon gesagt — bitte prüfen."),
        (D, "Gesprächsnotiz {{DATE|06.05.2025}}, {{ORG|Stadtwerke Ebersfeld}}. Kunde: [[P|Ferdinand Ploner]], Vertragskonto {{ID|210044718}}, Lieferstelle [[A|Grazer Straße 19/3, 8020 Graz]]. Tel. [[T|+43 316 555 0172]]. Neue Bankverbindung laut Kunde: [[IBAN|AT87 0213 4078 9843 0853]]. Bisher: [[IBAN|DE39 7085 3739 6304 6476 46]]. Tarif {{PRODUCT|Ökostrom Fix 24}}. Abschlag {{PRICE|86 €}} monatlich. Bearbeiterin [[P|Johanna Steinbichler]]: Kunde muss neues SEPA-Mandat schriftlich unterschreiben; Formular an [[E|f.ploner@alpenpost.example]] geschickt. Hinweis: Bankdaten am Telefon nicht vorlesen lassen, Kunde auf das Kundenportal verwiesen."),
        (A, "Die neue Bankverbindung wurde notiert, aber Herr [[P|Ploner]] muss das SEPA-Mandat noch unterschreiben. [[P|Johanna Steinbichler]] hat ihm das Formular per E-Mail geschickt; bis dahin wird der Abschlag von {{PRICE|86 €}} weiter vom bisherigen Konto eingezogen."),
    ],
    [
        (Q, "Which customers are affected by the recalled kettles from the {{LOCATION|Hamilton}} store?"),
        (D, "Recall match list — {{PRODUCT|AquaBoil 1.7L}} batch {{ID|AB-2311}}, {{ORG|Harbourview Electrical}}, {{LOCATION|Hamilton}} store.\n1. [[P|Ngaire Whitcombe]], [[A|12 Tui Crescent, Hillcrest, Hamilton 3216]], [[T|07 555 0183]]\n2. [[P|Rajinder Sandhu]], [[A|48 Clarkin Road, Fairfield, Hamilton 3214]], [[E|rsandhu@waikatomail.example]]\n3. [[P|Oliver Te Rangi]], [[A|3/9 Grey Street, Hamilton East, Hamilton 3216]]\nRefund {{PRICE|NZ$49.99}} or replacement with {{PRODUCT|AquaBoil 2}}. Letters to be sent by store manager [[P|Gemma Fairlie]] by {{DATE|30 June}}."),
        (A, "Three customers bought kettles from batch {{ID|AB-2311}} at {{LOCATION|Hamilton}}: [[P|Ngaire Whitcombe]], [[P|Rajinder Sandhu]] and [[P|Oliver Te Rangi]]. [[P|Gemma Fairlie]] is sending recall letters by {{DATE|30 June}}, offering a {{PRICE|NZ$49.99}} refund or an {{PRODUCT|AquaBoil 2}}."),
    ],
]
THREADS += [
    [
        (Q, "The customer [[P|Evander Moss-Kilbride]] says his new card never arrived. Where did we send it?"),
        (D, "Card issuance record — {{ORG|Caledon Bank}}. Customer: [[P|Evander Moss-Kilbride]], customer no. {{ID|CB-7710382}}. New card [[C|4604 7587 2251 4440]] issued {{DATE|8 July}}, expiry {{DATE|07/29}}, product {{PRODUCT|Caledon Rewards Visa}}. Dispatched by post to correspondence address [[A|Flat 6, 14 Rutland Square, Edinburgh EH1 2BB]]. Residential address (updated {{DATE|1 July}}): [[A|Birchwood, 9 Loanhead Road, Penicuik EH26 9LQ]]. NI number [[NINO|NR 73 19 58 B]]. Mobile [[T|07700 900934]]. Note: correspondence address not updated when residential address changed; agent [[P|Isla Cruickshank]] has cancelled the card and ordered a replacement."),
        (A, "The card went to the old correspondence address, [[A|Flat 6, 14 Rutland Square, Edinburgh EH1 2BB]], because only the residential address was updated on {{DATE|1 July}}. [[P|Isla Cruickshank]] has cancelled it and ordered a replacement; please update the correspondence address to [[A|Birchwood, 9 Loanhead Road, Penicuik EH26 9LQ]] too."),
    ],
    [
        (Q, "Hola, no me llega el reembolso de la matrícula del curso de verano. Me llamo [[P|Ximena Arredondo Villalobos]]."),
        (D, "Registro de pago — {{ORG|Universidad Internacional del Mediterráneo}}. Alumna: [[P|Ximena Arredondo Villalobos]], expediente {{ID|UIM-24-09913}}. Curso: {{PRODUCT|Curso de Verano de Arqueología Submarina}}, cancelado por la universidad el {{DATE|2 de junio}}. Importe {{PRICE|480,00 €}} pagado con tarjeta [[C|5262 8979 2171 5166]]. Dirección: [[A|Carrer de Provença 288, 5º 2ª, 08008 Barcelona]]. Teléfono [[T|+34 931 55 02 47]]. Reembolso solicitado por [[P|Jordi Puigdomènech]] ({{JOB_TITLE|administrativo}}) el {{DATE|5 de junio}}; el banco ha rechazado la devolución porque la tarjeta está caducada. Se requiere cuenta bancaria para transferencia."),
        (A, "Hola [[P|Ximena]], el reembolso de {{PRICE|480,00 €}} fue rechazado porque la tarjeta con la que pagó ha caducado. Envíenos los datos de una cuenta bancaria a su nombre y haremos la transferencia."),
    ],
    [
        (Q, "Summarise the security incident on the web shop admin panel from last night."),
        (D, "Incident {{ID|SEC-0192}} — {{ORG|Marlowe & Finch Booksellers}} web shop. {{DATE|2025-09-14}} 01:12 UTC: 412 failed admin logins from [[IP|198.51.100.143]] and [[IP|2001:db8:ac10::fe01]]. 01:19: successful login as [[E|admin.ops@marlowefinch.example]]; attacker created API token [[S|mf_pat_8Zq3Lw0Tn5Vr2Xk9Hd7J]]. 01:24: export of 1,204 customer records, including [[P|Perpetua Hollingworth]], [[A|22 Cathedral Close, Salisbury SP1 2EB]], and [[P|Ambrose Tenniel]], [[A|4 Keats Grove, Hampstead, London NW3 2RT]]. 01:40: on-call engineer [[P|Nadia Bouazza]] revoked the token and forced password reset. {{ORG|ICO}} notification due within 72 hours."),
        (A, "A brute-force attack led to an admin login at 01:19 UTC on {{DATE|2025-09-14}}; the attacker created an API token and exported 1,204 customer records. [[P|Nadia Bouazza]] revoked the token and reset passwords at 01:40. The {{ORG|ICO}} must be notified within 72 hours and affected customers informed."),
    ],
    [
        (Q, "Can you check if the landlord's gas safety certificate is on file for [[A|31 Cedar Avenue]]?"),
        (D, "Compliance record — {{ORG|Havelock Estates}}. Property: [[A|31 Cedar Avenue, Chelmsford CM1 2QJ]]. Landlord: [[P|Mark Sowerby]], [[A|The Grange, 2 Mill Road, Maldon CM9 5HZ]], [[T|01245 496 317]]. Tenants: [[P|Chiamaka Uzor]] and [[P|Bogdan Ionescu]]. Gas safety certificate: issued {{DATE|12 March 2024}} by [[P|Lewis Fairclough]] ({{ORG|Fairclough Gas & Heating}}), Gas Safe reg. {{ID|558120}}; expired {{DATE|11 March 2025}}. Renewal booked {{DATE|18 March 2025}}, not yet uploaded. EICR valid until {{DATE|2027}}. Lettings negotiator [[P|Keeley Driscoll]] to mark the file once received."),
        (A, "The certificate on file for [[A|31 Cedar Avenue]] expired on {{DATE|11 March 2025}}. A renewal was booked for {{DATE|18 March 2025}} but hasn't been uploaded; chase [[P|Lewis Fairclough]] or the landlord, [[P|Mark Sowerby]], for the new certificate."),
    ],
    [
        (Q, "Ci serve il riepilogo della richiesta di rimborso spese di viaggio di [[P|Benedetta Tagliaferri]]."),
        (D, "Nota spese {{ID|NS-2025-0418}} — {{ORG|Ferretti Consulting Srl}}. Dipendente: [[P|Benedetta Tagliaferri]], {{JOB_TITLE|consulente senior}}. Trasferta {{LOCATION|Milano}}–{{LOCATION|Torino}}, {{DATE|9–10 aprile}}, cliente {{ORG|Banca Sabauda}}. Spese: treno {{PRICE|62,80 €}}, hotel {{PRICE|138,00 €}}, pasti {{PRICE|41,50 €}}. Totale {{PRICE|242,30 €}}. Rimborso su [[IBAN|IT68 X272 4422 7925 3689 9720 941]]. Indirizzo di residenza: [[A|Via Ripamonti 140, 20141 Milano]]. Approvatore: [[P|Corrado Bellini]], approvata il {{DATE|14 aprile}}. Ricevuta del pranzo mancante, segnalata dall'amministrazione ([[P|Teresa Amendola]])."),
        (A, "La nota spese di [[P|Benedetta Tagliaferri]] per la trasferta a {{LOCATION|Torino}} del {{DATE|9–10 aprile}} ammonta a {{PRICE|242,30 €}} ed è stata approvata da [[P|Corrado Bellini]] il {{DATE|14 aprile}}. Manca solo una ricevuta del pranzo."),
    ],
    [
        (Q, "A retiree wrote in about her winter fuel payment. What's her situation?"),
        (D, "Letter received {{DATE|20 November}}, scanned to case {{ID|WFP-661027}}:\n'Dear Sirs, I have not received my Winter Fuel Payment this year. I am 79 and live alone at [[A|Apartment 3, Weaver's Court, 15 Canal Street, Stalybridge SK15 2PL]]. My National Insurance number is [[NINO|YH 20 41 87 D]]. I receive {{PRODUCT|Pension Credit}}. My late husband [[P|Herbert Lomax]] used to deal with these things. Please telephone me on [[T|0161 496 0452]] rather than write, as my eyesight is poor. Yours, [[P|Edna Lomax]]'\nCaseworker: [[P|Priyanka Salhotra]]. System shows payment of {{PRICE|£300}} due {{DATE|12 December}}."),
        (A, "Mrs [[P|Edna Lomax]] is worried her Winter Fuel Payment hasn't come. The system shows {{PRICE|£300}} due on {{DATE|12 December}}, so it's not late. She asked to be phoned rather than written to because of poor eyesight."),
    ],
]
