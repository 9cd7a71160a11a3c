# ruff: noqa: E501  (hand-written records: prose, one per line)
"""The blind PII set's threads (bench/data/make_pii_fresh.py builds pii_blind.jsonl from them)."""

from __future__ import annotations

from make_pii_fresh import A, D, Q, Thread

THREADS: list[Thread] = [
    # 1 retail return, UK
    [
        (Q, "Hi, I'm [[P|Rosamund Achterberg]]. I sent back the {{PRODUCT|Hearthline 3-in-1 air fryer}} on {{DATE|3 March}} and there's still no refund. Order {{ID|HL-448210}}. Please post any letters to [[A|Flat 2, 17 Cobbler's Yard, Leominster HR6 8QD]], not my old place."),
        (D, "Customer record, {{ORG|Hearthline Home}}\nName: [[P|Rosamund Achterberg]]\nEmail: [[E|r.achterberg@postmark-mail.example]]\nPhone: [[T|07700 900417]]\nDelivery address: [[A|Flat 2, 17 Cobbler's Yard, Leominster HR6 8QD]]\nPrevious address: [[A|44 Pendle View, Clitheroe BB7 2LS]]\nOrder {{ID|HL-448210}}: {{PRODUCT|Hearthline 3-in-1 air fryer}}, {{SKU|HH-AF3-BLK}}, {{PRICE|£89.99}}. Return authorised by [[P|Callum]] ({{JOB_TITLE|returns coordinator}}) on {{DATE|28 February}}. Courier {{ORG|Parcelwise}} collected, tracking {{TRACKING_NUMBER|PW7730018462GB}}. Customer asked that we do not bill her card again until the refund clears. Note added by [[P|Oyelaran]]."),
        (D, "Warehouse returns log, {{LOCATION|Daventry}} hub\n{{DATE|2025-03-05}} 09:14 RECEIVED {{TRACKING_NUMBER|PW7730018462GB}}, 1 carton, seal intact.\n{{DATE|2025-03-05}} 11:40 INSPECTED by [[P|Hannelore Viitanen]]: basket scratched, drawer complete, grade B.\n{{DATE|2025-03-06}} 08:02 REFUND QUEUED {{PRICE|£89.99}} to original payment, approver [[P|Dev Raghunathan]].\n{{DATE|2025-03-06}} 08:03 HOLD: refund batch paused by finance, reason 'bank file rejected'.\nEscalate to [[P|Gráinne Nic Giolla Phádraig]] if still held after five working days."),
        (A, "Thanks, [[P|Rosamund]]. Your fryer reached our {{LOCATION|Daventry}} hub on {{DATE|5 March}} and the refund of {{PRICE|£89.99}} was approved, but the finance batch it sat in was paused. I've flagged it to [[P|Gráinne Nic Giolla Phádraig]] in finance and updated your correspondence address to [[A|Flat 2, 17 Cobbler's Yard, Leominster HR6 8QD]]."),
    ],
    # 2 utilities, Ireland
    [
        (Q, "hi its [[P|aoife]] from [[A|14 Lios na Gréine, Ballincollig, Co. Cork P31 X2K7]], my meter reading was estimated again and the bill is way too high. can you check?"),
        (D, "Account summary, {{ORG|Ardmore Energy}}\nAccount holder: [[P|Aoife Breathnach]]\nSupply address: [[A|14 Lios na Gréine, Ballincollig, Co. Cork P31 X2K7]]\nMPRN {{ID|10 006 482 913}}\nContact: [[T|087 555 0142]], [[E|aoife.breathnach@inbox-lane.example]]\nLast actual read: {{NUMBER|18342}} kWh on {{DATE|12 November}}. Estimated read {{DATE|14 January}}: {{NUMBER|19960}} kWh. Bill {{ID|INV-2207731}} {{PRICE|€412.60}}. Direct debit from [[IBAN|IE54 BOFJ 8253 2979 2864 21]]. Meter reader [[P|Pádraig Ó Súilleabháin]] noted 'no access, dog in garden' on {{DATE|10 January}}. Second occupant on file: [[P|Kieran Breathnach]]."),
        (A, "Hi [[P|Aoife]], the {{DATE|14 January}} bill used an estimate because our reader couldn't get access. If you send a photo of the meter today I'll rebill {{ID|INV-2207731}} on the actual reading and hold the direct debit until then."),
        (Q, "grand, the dog is called Biscuit btw, he's harmless lol. reading is 18811"),
        (A, "Ha, noted for Biscuit. With {{NUMBER|18811}} kWh the corrected bill is much lower; the new one will come to [[A|14 Lios na Gréine, Ballincollig, Co. Cork P31 X2K7]] within two days."),
    ],
    # 3 telecoms, US, chat log
    [
        (Q, "Someone ported my number out without asking me. Account is under [[P|Maricruz Quintanilla-Reyes]], number [[T|(312) 555-0178]]. I need it back ASAP."),
        (D, "Chat transcript {{ID|CHT-90817}} ({{ORG|Lakeshore Wireless}})\n[14:02] [[P|Dwight]] (agent): Thanks for contacting us, who am I speaking with?\n[14:02] caller: this is [[P|maricruz]]\n[14:03] [[P|Dwight]] (agent): Can you confirm the service address?\n[14:03] caller: [[A|2210 W Foster Ave Apt 3R, Chicago, IL 60625]]\n[14:05] [[P|Dwight]] (agent): Verified. Port-out request {{ID|PO-55120}} came from {{ORG|Tristar Mobile}} at 11:47 with PIN matching.\n[14:06] caller: i never gave anyone my pin\n[14:07] [[P|Dwight]] (agent): Flagging as fraud, escalating to [[P|Leilani Kahananui]], fraud desk.\nNote: caller name on account [[P|Maricruz Quintanilla-Reyes]]; authorized user [[P|Tobias Quintanilla]]."),
        (D, "Fraud desk case note, {{DATE|June 18}}\nOwner: [[P|Leilani Kahananui]] ({{JOB_TITLE|fraud analyst}})\nLine [[T|(312) 555-0178]] ported to {{ORG|Tristar Mobile}} using account PIN. The PIN reset request earlier that day came from [[E|m.quintanilla.reyes@fastmail-demo.example]], which the customer says is not hers; the legitimate address on file is [[E|maricruz.qr@lakeview-home.example]]. Reset was made from IP [[IP|198.51.100.47]]. Action: port-back request {{ID|PB-77231}} lodged, new PIN to be mailed to [[A|2210 W Foster Ave Apt 3R, Chicago, IL 60625]]. Reviewed by [[P|Grant Okonkwo-Bell]]."),
        (A, "I'm sorry, [[P|Maricruz]]. Our fraud team confirmed the port was made with a PIN reset you didn't request. A port-back ({{ID|PB-77231}}) is underway, and a new PIN is being mailed to your service address. Your number should be working again within 24 hours."),
    ],
    # 4 banking, Germany, mixed German
    [
        (Q, "Guten Tag, ich erkenne eine Abbuchung über {{PRICE|249,00 €}} vom {{DATE|2. Mai}} nicht. Meine Karte endet auf 6517. Kontoinhaber: [[P|Friederike Unterhuber]]."),
        (D, "Kundenstamm {{ORG|Nordwald Bank}}\nName: [[P|Friederike Unterhuber]]\nGeburtsdatum: [[DOB|14.08.1979]]\nAnschrift: [[A|Kastanienallee 61, 10119 Berlin]]\nTelefon: [[T|+49 30 555 28714]]\nIBAN: [[IBAN|DE79 5793 9531 3600 0419 12]]\nKarte: [[C|4217 5229 3838 6517]], gültig bis {{DATE|09/27}}\nUmsatz {{DATE|02.05.}}: {{PRICE|249,00 €}} bei {{ORG|Kramer & Söhne Elektro}}, {{LOCATION|Leipzig}}, Terminal {{ID|TRM-00418}}.\nBetreuer: [[P|Jörg Pfannenstiel]] ({{JOB_TITLE|Kundenberater}}). Vermerk: Kundin hat den Umsatz telefonisch reklamiert und war laut eigener Aussage am {{DATE|2. Mai}} in {{LOCATION|Rostock}}."),
        (A, "Frau [[P|Unterhuber]], die Abbuchung stammt von einem Händler in {{LOCATION|Leipzig}}. Ich habe die Karte gesperrt und einen Widerspruch eröffnet; Ihre Ersatzkarte geht an [[A|Kastanienallee 61, 10119 Berlin]]. Herr [[P|Pfannenstiel]] meldet sich innerhalb von zwei Werktagen."),
    ],
    # 5 insurance, South Africa
    [
        (Q, "My geyser burst and flooded the lounge. Policy is in my name, [[P|Zanele Mthimkhulu]]. What do I need to send?"),
        (D, "Policy schedule, {{ORG|Protea Mutual Insurance}}\nPolicyholder: [[P|Zanele Mthimkhulu]]\nDate of birth: [[DOB|1986-02-19]]\nRisk address: [[A|27 Jacaranda Street, Menlo Park, Pretoria, 0081]]\nPostal: [[A|PO Box 11842, Hatfield, 0028]]\nCell: [[T|082 555 7319]]\nCover: {{PRODUCT|HomeGuard Plus}}, buildings {{PRICE|R2 400 000}}, excess {{PRICE|R3 500}}.\nSpouse: [[P|Sipho Mthimkhulu]]. Broker: [[P|Riaan van der Merwe]], {{ORG|Van Wyk & Botha Brokers}}. Last claim {{ID|CLM-2019-4471}} (storm damage) settled {{DATE|2019-12-04}}."),
        (D, "Claims checklist, burst geyser (KB article {{ID|KB-311}})\n1. Photos of the geyser, drip tray and damaged rooms before any cleanup.\n2. Plumber's report stating cause of failure. Approved plumbers near {{LOCATION|Pretoria}}: {{ORG|Mokoena Plumbing cc}}, {{ORG|Blue Crane Geysers}}.\n3. Quote for replacement, including labour and the {{PRODUCT|Kwikot 150L}} unit or equivalent.\n4. List of damaged contents with approximate values.\nAn assessor may visit within 48 hours. Excess applies per claim. Do not discard the old geyser until the assessor confirms."),
        (A, "Sorry to hear that, [[P|Zanele]]. Please send photos, a plumber's report and a replacement quote. Your excess on {{PRODUCT|HomeGuard Plus}} is {{PRICE|R3 500}}. An assessor will contact you on [[T|082 555 7319]] to arrange a visit to [[A|27 Jacaranda Street, Menlo Park, Pretoria, 0081]]."),
    ],
    # 6 healthcare appointment, India
    [
        (Q, "I need to move my mother's cardiology follow-up. She is [[P|Kamala Venkataraman]], the appointment is on {{DATE|22 August}}."),
        (D, "Appointment record, {{ORG|Sri Ranga Multispeciality Hospital}}\nPatient: [[P|Kamala Venkataraman]], DOB [[DOB|03/11/1951]]\nMRN: {{ID|SRMH-0098317}}\nAddress: [[A|Plot 12, 4th Cross Street, Besant Nagar, Chennai 600090, Tamil Nadu]]\nMobile: [[T|+91 98400 55172]]\nNext of kin: [[P|Anand Venkataraman]] (son), [[E|anand.venkat@mailbox-south.example]]\nConsultant: Dr. [[P|Lalitha Ramasubramanian]], {{JOB_TITLE|Consultant Cardiologist}}\nSlot: {{DATE|22 August}}, 10:30, OPD block B. Medication on file: {{DRUG|atorvastatin}} 20 mg, {{DRUG|clopidogrel}} 75 mg. Echo booked separately with technician [[P|Joseph Arockiasamy]]."),
        (A, "Hello [[P|Anand]]. I can move your mother's review with Dr. [[P|Ramasubramanian]] to {{DATE|29 August}} at 11:00. Please keep bringing her {{DRUG|atorvastatin}} and {{DRUG|clopidogrel}} list. Confirmation will go by SMS to [[T|+91 98400 55172]]."),
    ],
    # 7 HR payroll, UK
    [
        (Q, "Why was emergency tax applied to my March payslip? I'm [[P|Comfort Adeyemi-Clarke]], employee {{ID|E-20417}}."),
        (D, "Payroll record, {{ORG|Corrigan Facilities Management Ltd}}\nEmployee: [[P|Comfort Adeyemi-Clarke]] ({{ID|E-20417}})\nNI number: [[NINO|PX 71 38 24 C]]\nDate of birth: [[DOB|27 May 1994]]\nHome: [[A|9 Wycliffe Terrace, Gateshead NE8 4RT]]\nBank: [[IBAN|GB47 QRST 3696 4984 5997 69]]\nRole: {{JOB_TITLE|Site Supervisor}}, start date {{DATE|3 February 2025}}\nTax code: {{ID|0T M1}} (emergency) since no P45 received. Previous employer per starter checklist: {{ORG|Hargreaves Logistics}}. Payroll contact: [[P|Fenella Drinkwater]], ext 2214. Manager: [[P|Wisdom Agyeman]]."),
        (A, "Hi [[P|Comfort]], you're on the emergency code because we never received a P45 from {{ORG|Hargreaves Logistics}}. Send it to [[P|Fenella Drinkwater]] in payroll, or HMRC will issue us a code; any overpaid tax comes back through your next payslip."),
    ],
    # 8 lettings, Australia
    [
        (Q, "The bond refund for my old rental hasn't come through. The flat was [[A|Unit 7, 33 Grey Street, St Kilda VIC 3182]]. I moved out {{DATE|30 April}}."),
        (D, "Tenancy file {{ID|TF-8831}}, {{ORG|Bayside Property Co}}\nTenants: [[P|Ngaire Te Whata]], [[P|Lachlan Pemberton-Hayes]]\nProperty: [[A|Unit 7, 33 Grey Street, St Kilda VIC 3182]]\nBond: {{PRICE|$2,160}} lodged with RTBA, bond no. {{ID|B-4401927}}\nForwarding address: [[A|18 Koornang Road, Carnegie VIC 3163]]\nContact: [[T|0491 577 644]], [[E|ngaire.tw@kowhai-mail.example]]\nExit inspection {{DATE|2 May}} by [[P|Dimitra Kalogeropoulou]] ({{JOB_TITLE|property manager}}): carpet stain in bedroom 2, otherwise good. Owner [[P|Reginald Thistlewood]] has not yet signed the bond claim form."),
        (A, "Hi [[P|Ngaire]], the inspection found only a small carpet stain, but the owner hasn't signed the bond release yet. [[P|Dimitra]] is chasing him today; once signed, the RTBA pays to your nominated account within a few days."),
    ],
    # 9 travel, Japan
    [
        (Q, "Can I add a late check-out to my Kyoto booking? Reservation {{ID|RSV-66012}}, guest [[P|Haruto Kiyomizu]]."),
        (D, "Booking confirmation, {{ORG|Hotel Kamogawa Terrace}}\nGuest: [[P|Haruto Kiyomizu]] (Mr.)\nCompanion: [[P|Yui Kiyomizu]]\nHome address: [[A|3-14-7 Nishi-Ogikubo, Suginami-ku, Tokyo 167-0053]]\nPhone: [[T|090-5550-2861]]\nEmail: [[E|h.kiyomizu@sakura-post.example]]\nStay: {{DATE|14 October}} to {{DATE|17 October}}, Deluxe River View, {{PRICE|¥84,600}}\nCard guarantee: [[C|3709 242912 50911]]\nNear {{LOCATION|Sanjo Station}}; airport transfer from {{LOCATION|Kansai International Airport}} not requested. Front desk lead: [[P|Sakiko Matsudaira]]. Check-in from 15:00, check-out by 11:00; late check-out is subject to availability and charged per hour. Breakfast is served in the garden room."),
        (A, "Certainly, Mr. [[P|Kiyomizu]]. Late check-out until 14:00 on {{DATE|17 October}} is confirmed for {{PRICE|¥3,000}}, added to the card on file. [[P|Sakiko Matsudaira]] at the front desk has the note."),
    ],
    # 10 SaaS security logs
    [
        (Q, "We saw a login alert for our admin account from a country we don't operate in. Can you check what happened? Workspace {{ID|ws-cobalt-912}}."),
        (D, "auth.log (workspace {{ID|ws-cobalt-912}})\n{{DATE|2025-07-09}}T02:14:55Z login_success user=[[E|eirik.tveiteras@fjordline-tools.example]] ip=[[IP|203.0.113.146]] ua=\"curl/8.4\"\n{{DATE|2025-07-09}}T02:15:02Z api_key_created user=[[E|eirik.tveiteras@fjordline-tools.example]] key_id={{ID|key_41f}} name=\"backup-sync\"\n{{DATE|2025-07-09}}T02:15:40Z export_started rows=48211 by=\"[[P|Eirik Tveiterås]]\"\n{{DATE|2025-07-09}}T08:31:10Z login_success user=[[E|sigrun.ellefsen@fjordline-tools.example]] ip=[[IP|192.0.2.173]]\n{{DATE|2025-07-09}}T08:33:12Z api_key_revoked key_id={{ID|key_41f}} by=\"[[P|Sigrún Ellefsen]]\"\nTicket {{ID|SEC-2231}}, opened by the customer's {{JOB_TITLE|IT manager}}: the admin says he was asleep at the time and did not run any export. He also reports that a copy of the team's deployment config was pasted into a public forum thread the day before. Note in ticket: leaked config contained DB_PASSWORD=[[S|vT8#qLm2!Rw9zKp4]] and the token [[S|sk_live_7Hq2ZxP0mN4rB8tY1cVa]]."),
        (A, "The 02:14 UTC login for [[P|Eirik Tveiterås]] came from [[IP|203.0.113.146]] using a command-line client and created an API key that started an export. [[P|Sigrún Ellefsen]] revoked the key at 08:33. Please rotate the database password and the live token mentioned in your ticket, and reset [[P|Eirik]]'s password with MFA enforced."),
    ],
    # 11 logistics / customs, Netherlands
    [
        (Q, "My parcel from Canada is stuck in customs at Schiphol and they want import VAT. It's addressed to [[P|Willemijn van der Houwen]]. Tracking {{TRACKING_NUMBER|CX448120773NL}}."),
        (D, "Douane-aangifte / customs hold notice, {{ORG|Polderpost Logistics B.V.}}\nShipment: {{TRACKING_NUMBER|CX448120773NL}}\nSender: [[P|Gordon MacQuarrie]], [[A|112 Rue Saint-Denis, Montréal, QC H2X 3K6, Canada]]\nConsignee: [[P|Willemijn van der Houwen]]\nDelivery address: [[A|Prinsengracht 418-III, 1016 JK Amsterdam]]\nTel: [[T|06 5550 1934]]\nContents: handmade wool blanket, declared value {{PRICE|CAD 310}}, marked 'gift'. Gifts above {{PRICE|€45}} are taxable. Import VAT due {{PRICE|€44.10}} plus handling {{PRICE|€17.50}}. Held at {{LOCATION|Schiphol}} airfreight centre since {{DATE|11 februari}}. Officer: [[P|Ruud Brinkerink]]. Payment via iDEAL link sent to [[E|willemijn.vdh@grachtpost.example]]."),
        (A, "Hi [[P|Willemijn]], your blanket is held because gifts worth more than {{PRICE|€45}} are taxable. You owe {{PRICE|€44.10}} VAT plus {{PRICE|€17.50}} handling; the payment link went to your e-mail. Once paid, it'll be delivered to [[A|Prinsengracht 418-III, 1016 JK Amsterdam]] within two working days."),
    ],
    # 12 school admin, New Zealand
    [
        (Q, "Kia ora, I need to update the emergency contacts for my son [[P|Rāwiri]] in Year 5. He's in Room 12."),
        (D, "Student enrolment record, {{ORG|Te Awa Kairangi Primary School}}\nStudent: [[P|Rāwiri Tūhoe-Parata]], Year 5, Room 12, DOB [[DOB|9 March 2015]]\nHome: [[A|46 Kowhai Grove, Upper Hutt 5018]]\nCaregiver 1: [[P|Mereana Parata]], [[T|021 555 0873]], [[E|mereana.parata@tuimail.example]]\nCaregiver 2: [[P|Sione Fifita]], [[T|027 555 0391]]\nEmergency contact: [[P|Losaline Fifita]] (aunt)\nClassroom teacher: Whaea [[P|Kiri Mahuika]]\nMedical: mild asthma, {{DRUG|salbutamol}} inhaler kept in office. Bus route: 14, stop at {{LOCATION|Trentham Station}}. Last updated {{DATE|2 February 2024}}."),
        (A, "Kia ora [[P|Mereana]]. I can see [[P|Losaline Fifita]] listed as the emergency contact for [[P|Rāwiri]]. Send me the new contact's name and phone number and I'll update the record; Whaea [[P|Kiri]] will get a copy for the class list."),
        (Q, "Please add my cousin [[P|Hemi Ngata]], [[T|022 555 0614]], and remove [[P|Losaline]]."),
        (A, "Done: [[P|Hemi Ngata]] ([[T|022 555 0614]]) is now the emergency contact and [[P|Losaline]] has been removed."),
    ],
    # 13 conveyancing, UK
    [
        (Q, "When is completion on our purchase? We're buying [[A|The Old Forge, Church Lane, Little Wenham, Suffolk IP7 6QB]]. Our names are [[P|Leopold]] and [[P|Philippa Hartigan-Lowe]]."),
        (D, "Matter summary, {{ORG|Penhaligon Drake Solicitors LLP}}\nMatter {{ID|CONV/24/1183}}\nClients: Mr [[P|Leopold Hartigan-Lowe]] and Mrs [[P|Philippa Hartigan-Lowe]]\nCurrent address: [[A|22 Bishopsgate Mews, Colchester CO1 1FH]]\nProperty: [[A|The Old Forge, Church Lane, Little Wenham, Suffolk IP7 6QB]]\nPrice {{PRICE|£615,000}}; mortgage offer from {{ORG|Stourvale Building Society}} expires {{DATE|30 September}}.\nSeller's solicitor: [[P|Oluwaseun Bakare]], {{ORG|Ashcombe & Rye}}. Searches returned {{DATE|14 July}}; flood search flags the ditch along Church Lane. Fee earner: [[P|Tamsin Penwarden]] ({{JOB_TITLE|senior conveyancer}}). Exchange targeted for {{DATE|29 August}}, completion {{DATE|12 September}}."),
        (A, "Hello Mr and Mrs [[P|Hartigan-Lowe]]. [[P|Tamsin Penwarden]] is aiming for exchange on {{DATE|29 August}} and completion on {{DATE|12 September}}, well before your mortgage offer expires on {{DATE|30 September}}. She's waiting on one reply from the seller's solicitor about the flood search."),
    ],
    # 14 charity donation, Canada
    [
        (Q, "Can you resend my tax receipt for last year's donations? I donate monthly. My name is [[P|Aurélien Thibodeau-Nakamura]]."),
        (D, "Donor profile, {{ORG|Northern Lights Literacy Foundation}}\nDonor: [[P|Aurélien Thibodeau-Nakamura]]\nMailing: [[A|58 Rue des Érables, Gatineau, QC J8T 4P2]]\nEmail: [[E|aurelien.tn@boreal-post.example]]\nPhone: [[T|819-555-0167]]\nGift: monthly {{PRICE|$40 CAD}} by card [[C|4152 8989 4713 4958]]\nTotal {{DATE|2024}}: {{PRICE|$480.00}}; receipt {{ID|RCPT-2024-07719}} issued {{DATE|February 10}}, returned undeliverable from old address [[A|301-1450 Wellington St, Ottawa, ON K1Y 3A9]].\nIn memory of: [[P|Hope Thibodeau]]. Stewardship officer: [[P|Mackenzie Ouellette]]. Charitable registration {{ID|81231 4470 RR0001}}."),
        (A, "Thanks, [[P|Aurélien]]. Your {{DATE|2024}} receipt ({{ID|RCPT-2024-07719}}, {{PRICE|$480.00}}) was sent to your old Ottawa address and came back. I've e-mailed a PDF copy and posted a paper one to [[A|58 Rue des Érables, Gatineau, QC J8T 4P2]]."),
    ],
    # 15 government-style form, US
    [
        (Q, "I'm filling in the dependent care form for my daughter. Do I put her SSN or mine in box 4?"),
        (D, "Form DC-2 (draft saved {{DATE|03/02/2025}})\n1. Applicant name: [[P|Darnell Whitfield-Okoro]]\n2. Applicant SSN: [[SSN|512-48-7730]]\n3. Home address: [[A|4417 Magnolia Bend Dr, Apt 210, Raleigh, NC 27606]]\n4. Dependent: [[P|Imani Whitfield-Okoro]], date of birth [[DOB|11/19/2019]], SSN [[SSN|689-21-4053]]\n5. Care provider: {{ORG|Little Acorns Learning Center}}, EIN {{ID|56-1873340}}\n6. Amount paid in {{DATE|2024}}: {{PRICE|$7,840}}\n7. Daytime phone: [[T|919-555-0143]]\nPreparer (if any): [[P|Rocky Delvecchio]], {{JOB_TITLE|enrolled agent}}\nSignature: ______  Date: ______"),
        (A, "Box 4 is for the dependent, so it takes [[P|Imani]]'s details, including her SSN, not yours; yours belongs in box 2, which you've already filled. The provider's EIN in box 5 is correct."),
    ],
    # 16 gym membership, Singapore
    [
        (Q, "hey this is [[P|wei jie]], i want to freeze my gym membership for 2 months, going overseas for work"),
        (D, "Member profile, {{ORG|IronLeaf Fitness}} ({{LOCATION|Tanjong Pagar}} club)\nMember: [[P|Tan Wei Jie]] ({{ID|M-0041872}})\nAddress: [[A|Blk 512 Bedok North Avenue 3, #09-214, Singapore 460512]]\nMobile: [[T|+65 9155 0274]]\nEmail: [[E|weijie.tan@lionmail.example]]\nPlan: {{PRODUCT|All-Club Unlimited}}, {{PRICE|S$168}}/month, card [[C|5134 9993 0040 4697]]\nFreezes used this year: 0 of 2 (max 60 days each, {{PRICE|S$15}} admin fee).\nPersonal trainer: [[P|Nurul Huda binte Rahmat]]. Referred by [[P|Kwame Asante-Boateng]]. Membership started {{DATE|1 June 2023}}."),
        (A, "Hi [[P|Wei Jie]], you can freeze for up to 60 days with a {{PRICE|S$15}} fee. I've scheduled the freeze from {{DATE|1 May}} to {{DATE|30 June}}; your PT sessions with [[P|Nurul Huda]] are paused too. Safe travels!"),
    ],
    # 17 vet, France (French)
    [
        (Q, "Bonjour, mon chat Caramel doit faire son rappel de vaccin. Le dossier est au nom de [[P|Ségolène Marchetti-Duval]]. Vous avez un créneau samedi ?"),
        (D, "Fiche client, {{ORG|Clinique Vétérinaire des Tilleuls}}\nPropriétaire : Mme [[P|Ségolène Marchetti-Duval]]\nAdresse : [[A|7 bis, rue des Glycines, 69004 Lyon]]\nTél. : [[T|06 55 50 18 42]]\nCourriel : [[E|s.marchetti.duval@courrier-rhone.example]]\nAnimal : Caramel, chat européen, 6 ans, puce {{ID|250269811402377}}\nDernier vaccin {{PRODUCT|Purevax RCP}} le {{DATE|14 mai 2024}}. Traitement : {{DRUG|milbémycine}} tous les trois mois.\nVétérinaire : Dr [[P|Théo Lemaire-Benali]]. Remarque : le chat est stressé en voiture ; Mme [[P|Marchetti-Duval]] demande le premier rendez-vous du matin."),
        (A, "Bonjour Madame [[P|Marchetti-Duval]], le Dr [[P|Lemaire-Benali]] peut voir Caramel samedi {{DATE|17 mai}} à 8 h 30, premier créneau de la matinée. Un rappel par SMS sera envoyé la veille."),
    ],
    # 18 car hire, Spain (Spanish)
    [
        (Q, "Hola, he recibido un cargo de {{PRICE|180 €}} por daños en el coche que alquilé en Málaga. No hice ningún daño. Reserva {{ID|RES-MLG-30921}}."),
        (D, "Contrato de alquiler, {{ORG|Costa Sol Rent a Car}}\nArrendatario: [[P|Unai Arrieta Goikoetxea]]\nDomicilio: [[A|Calle de Ercilla 27, 4º B, 48011 Bilbao, Bizkaia]]\nTeléfono: [[T|+34 655 501 287]]\nConductor adicional: [[P|Maite Zubizarreta]]\nVehículo: {{PRODUCT|Seat Arona}}, matrícula {{ID|4471 LKB}}\nRecogida {{LOCATION|Aeropuerto de Málaga}}, {{DATE|3 de julio}}; devolución {{DATE|10 de julio}}.\nTarjeta de garantía: [[C|5160 3322 3441 3849]]\nInforme de devolución por [[P|Rocío Benjumea]]: arañazo en paragolpes trasero, 12 cm. Sin fotos en la recogida."),
        (A, "Hola [[P|Unai]]. El informe de devolución de [[P|Rocío Benjumea]] marca un arañazo trasero, pero no hay fotos de la recogida que prueben que no existía antes. He abierto una reclamación para anular el cargo de {{PRICE|180 €}} y te responderemos en cinco días hábiles."),
    ],
    # 19 home repair, US
    [
        (Q, "The plumber you sent didn't fix the leak under my kitchen sink, it's dripping again. Job {{ID|JB-60214}}."),
        (D, "Work order {{ID|JB-60214}}, {{ORG|Handy Harbor Home Services}}\nCustomer: [[P|Honey Castellanos]]\nService address: [[A|918 Juniper Hollow Rd, Boise, ID 83709]]\nGate code: [[S|4471#]]\nPhone: [[T|208-555-0119]]\nTechnician: [[P|Bartholomew Nkemelu]], {{JOB_TITLE|licensed plumber}}\nVisit {{DATE|Tuesday 4/15}}, 2 hrs: replaced P-trap and slip nut, {{PRODUCT|Oatey 1-1/2 in. P-trap}}, {{SKU|OAT-41245}}. Invoice {{PRICE|$214.00}} paid by card ending 2481. 30-day workmanship warranty. Notes: customer's neighbor [[P|Hunter Gallagher]] let tech in; customer at work."),
        (A, "Sorry about that, [[P|Honey]]. The repair on job {{ID|JB-60214}} is covered by our 30-day warranty, so there's no charge for the return visit. [[P|Bartholomew]] can come back Thursday morning; should [[P|Hunter Gallagher]] let him in again?"),
    ],
    # 20 SaaS admin, Poland
    [
        (Q, "Please remove a former employee from our workspace and transfer his files to me. His name is [[P|Przemysław Wójcik-Zieliński]]."),
        (D, "Admin console export, tenant {{ID|tn-wisla-analytics}}\nid,name,email,role,last_login,status\n{{ID|u-3301}},[[P|Przemysław Wójcik-Zieliński]],[[E|p.wojcik.zielinski@wislaanalytics.example]],admin,{{DATE|2025-01-30}},active\n{{ID|u-3302}},[[P|Wiesława Chmielewska]],[[E|w.chmielewska@wislaanalytics.example]],owner,{{DATE|2025-03-11}},active\n{{ID|u-3307}},[[P|Bożena Kwiatkowska]],[[E|b.kwiatkowska@wislaanalytics.example]],member,{{DATE|2025-03-10}},active\nBilling contact: [[A|ul. Długa 14/6, 80-827 Gdańsk]]; plan {{PRODUCT|Team Pro}} v{{VERSION|4.2}}, 25 seats.\nNote from support engineer [[P|Mateusz]]: {{ID|u-3301}} still owns 2 API tokens; before offboarding revoke them and transfer ownership of 143 dashboards to the workspace owner, otherwise the files are deleted after 30 days. The customer confirmed by phone that the employee left the company at the end of January."),
        (A, "Hi [[P|Wiesława]], I've suspended [[P|Przemysław Wójcik-Zieliński]]'s account, revoked his two API tokens and moved his 143 dashboards to you as owner. His seat is free now."),
    ],
    # 21 retail, US PO box and gift shipping
    [
        (Q, "I ordered two gifts on one order but they need to go to different people. Can you split the shipping? Order {{ID|#A-771203}}."),
        (D, "Order {{ID|#A-771203}}, {{ORG|Cedar & Finch Outfitters}}\nBuyer: [[P|Ezekiel Montgomery-Tran]], [[E|zeke.mt@prairiewind.example]], [[T|(406) 555-0136]]\nBilling: [[A|PO Box 2271, Bozeman, MT 59771]]\nItem 1: {{PRODUCT|Ridgeback Down Vest}}, {{SKU|CF-RV-220-M}}, {{PRICE|$129.00}}, gift for [[P|Faith Okoro-Lindgren]]\nItem 2: {{PRODUCT|Trailhead Thermos 1L}}, {{SKU|CF-TT-1000}}, {{PRICE|$34.50}}, gift for [[P|Augustin Ferreira]]\nShip to (current): [[A|77 Sycamore Ridge Ct, Missoula, MT 59803]]\nGift message: 'Happy birthday [[P|Gus]], from [[P|Zeke]]'. Card on file [[C|4905 9461 2792 3870]]. Warehouse: {{LOCATION|Salt Lake City}} DC. Packed by [[P|Soraya]], not yet shipped."),
        (A, "Hi [[P|Ezekiel]], the order hasn't shipped yet, so I can split it. The vest will still go to [[A|77 Sycamore Ridge Ct, Missoula, MT 59803]]; where should the thermos for [[P|Augustin Ferreira]] go?"),
        (Q, "thermos goes to [[P|gus]] at [[A|1402 e aspen st, flagstaff az 86001]]. thanks!"),
        (A, "Done: the thermos now ships to [[A|1402 E Aspen St, Flagstaff, AZ 86001]] with the birthday message. Split shipping is free this time."),
    ],
    # 22 telecom, Kenya
    [
        (Q, "Nimeibiwa simu. My line was stolen with the phone, please block the SIM. Number [[T|0712 555 381]], registered to [[P|Nyambura Kamau-Mwangi]]."),
        (D, "Subscriber KYC record, {{ORG|Savanna Telecom}}\nName: [[P|Nyambura Kamau-Mwangi]]\nMSISDN: [[T|0712 555 381]]\nAlt contact: [[T|0733 555 902]] ([[P|Otieno Ochieng]], brother)\nPhysical address: [[A|House 14, Riara Road, Kilimani, Nairobi]]\nPostal: [[A|P.O. Box 40817-00100, Nairobi]]\nMobile money wallet: {{PRODUCT|PesaFlow}}, balance {{PRICE|KES 12,450}}\nLast SIM swap: none. Device IMEI {{ID|356938035643809}}.\nCustomer reports handset stolen on a matatu this morning. Registered at {{ORG|Savanna Shop Yaya Centre}} by agent [[P|Chebet Koech]] on {{DATE|2019-08-02}}."),
        (A, "Pole sana, [[P|Nyambura]]. The SIM for [[T|0712 555 381]] is now blocked and your {{PRODUCT|PesaFlow}} wallet is frozen, so nobody can withdraw the {{PRICE|KES 12,450}}. Bring your ID to any of our shops for a replacement SIM; your brother's number stays as the alternative contact."),
    ],
    # 23 banking, Nigeria
    [
        (Q, "I made a transfer of {{PRICE|₦250,000}} to my supplier yesterday and it hasn't arrived. Sender is [[P|Chukwuemeka Obi-Nwosu]]."),
        (D, "Transfer trace, {{ORG|Lagoon Commercial Bank}}\nSender: [[P|Chukwuemeka Obi-Nwosu]], account {{ID|0123 4455 XX}}\nAddress: [[A|Plot 7, Admiralty Way, Lekki Phase 1, Lagos]]\nPhone: [[T|0803 555 0429]]\nBeneficiary: [[P|Gift Adebanjo]] t/a {{ORG|Adebanjo Building Supplies}}, {{ORG|Harbour Trust Bank}}\nBeneficiary address: [[A|23 Ogui Road, Enugu]]\nAmount {{PRICE|₦250,000}}, session {{ID|000013250611142217489901}}, {{DATE|11 June}} 14:22.\nStatus: debited, pending at NIBSS; beneficiary bank not yet credited. Relationship manager: [[P|Funmilayo Oyebanji]]. Escalated by [[P|Precious Etim]], {{JOB_TITLE|e-channels officer}}."),
        (A, "Good afternoon, Mr [[P|Obi-Nwosu]]. The {{PRICE|₦250,000}} left your account on {{DATE|11 June}} but is still pending at the interbank switch. [[P|Precious Etim]] has escalated it; if it isn't credited to [[P|Gift Adebanjo]] within 24 hours it reverses to you automatically."),
    ],
    # 24 insurance, Italy (Italian)
    [
        (Q, "Buongiorno, ho avuto un piccolo incidente in retromarcia nel parcheggio dell'Esselunga. Come apro il sinistro? Polizza {{ID|RCA-7730461}}."),
        (D, "Scheda polizza, {{ORG|Assicurazioni Ponte Vecchio}}\nContraente: [[P|Gianmarco Lo Presti]]\nNato il: [[DOB|21/04/1983]]\nResidenza: [[A|Via dei Serragli 112, 50124 Firenze FI]]\nCellulare: [[T|+39 333 555 0817]]\nEmail: [[E|gianmarco.lopresti@posta-toscana.example]]\nVeicolo: {{PRODUCT|Fiat Panda}}, targa {{ID|GK 418 RT}}\nControparte: [[P|Annunziata Cavallaro]], [[A|Viale Europa 55, 50126 Firenze]], veicolo {{PRODUCT|Lancia Ypsilon}}\nLuogo: parcheggio {{ORG|Esselunga}} di {{LOCATION|Gavinana}}, {{DATE|3 marzo}}. Modulo CAI firmato da entrambi. Perito incaricato: [[P|Salvatore Genovese]]."),
        (A, "Buongiorno signor [[P|Lo Presti]]. Con il modulo CAI firmato da lei e dalla signora [[P|Cavallaro]] il sinistro si apre online; il perito [[P|Salvatore Genovese]] la chiamerà al [[T|+39 333 555 0817]] per fissare la perizia."),
    ],
    # 25 prescription, UK
    [
        (Q, "My repeat prescription hasn't gone to the pharmacy. I'm on {{DRUG|levothyroxine}} and {{DRUG|sertraline}}. Name's [[P|Gwenllian Prydderch]]."),
        (D, "Repeat request log, {{ORG|Afon Dyfi Medical Practice}}\nPatient: [[P|Gwenllian Prydderch]], DOB [[DOB|02/09/1968]], NHS no. {{ID|943 476 5919}}\nAddress: [[A|Tŷ Gwyn, 3 Heol y Felin, Machynlleth SY20 8EZ]]\nNominated pharmacy: {{ORG|Patel Pharmacy}}, {{LOCATION|Maengwyn Street}}\nRequested {{DATE|8 April}}: {{DRUG|levothyroxine}} 100 mcg x56, {{DRUG|sertraline}} 50 mg x28.\nStatus: {{DRUG|sertraline}} signed by Dr [[P|Ifan Rhys-Jenkins]]; {{DRUG|levothyroxine}} on hold, blood test overdue (last TSH {{DATE|March 2024}}).\nMessage sent to [[T|07700 900582]] on {{DATE|9 April}}: please book bloods with nurse [[P|Hywel]]."),
        (A, "Hi [[P|Gwenllian]], your {{DRUG|sertraline}} has been signed and sent to {{ORG|Patel Pharmacy}}. The {{DRUG|levothyroxine}} is on hold because your thyroid blood test is overdue; the doctor will issue a short supply once you've booked it."),
    ],
    # 26 recruiting, Korea
    [
        (Q, "Could you confirm my interview time for the data engineer role? Applicant [[P|Kang Min-seo]]."),
        (D, "Candidate profile, {{ORG|Hanbit Data Co., Ltd.}} recruiting\nName: [[P|Kang Min-seo]] (강민서)\nEmail: [[E|minseo.kang@hangang-mail.example]]\nMobile: [[T|010-5550-3128]]\nAddress: [[A|Apt 1203, 45 Olympic-ro 35-gil, Songpa-gu, Seoul 05510]]\nPosition: {{JOB_TITLE|Data Engineer}} ({{ID|REQ-2291}})\nStage: technical interview, {{DATE|2025-05-21}} 14:00 KST, video.\nPanel: [[P|Park Tae-gyu]] ({{JOB_TITLE|Engineering Manager}}), [[P|Yoon Seo-yeon]]\nReferral: [[P|Oh Dong-hyuk]]. Prior employer: {{ORG|Jeju Cloud Systems}}. Salary expectation {{PRICE|₩72,000,000}}. Recruiter: [[P|Charlotte Ibekwe-Saunders]]. Candidate asked whether the interview can be held in English; panel agreed."),
        (A, "Hi [[P|Min-seo]], your technical interview is on {{DATE|21 May}} at 14:00 KST by video with [[P|Park Tae-gyu]] and [[P|Yoon Seo-yeon]]. [[P|Charlotte]] will send the link the day before."),
    ],
    # 27 lettings, UK, chat address correction
    [
        (Q, "hi its [[P|jarek]], the repair guy went to the wrong house yesterday. its [[A|22 maple crescent, bedford mk40 3hs]] not 24"),
        (D, "Maintenance ticket {{ID|MT-40921}}, {{ORG|Ouse Valley Lettings}}\nTenant: [[P|Jarosław Grabowski]], [[T|07700 900263]]\nProperty (system): [[A|24 Maple Crescent, Bedford MK40 3HS]]\nIssue: boiler pressure dropping, no hot water since {{DATE|Sunday}}.\nContractor: {{ORG|Fenwick & Daughters Heating}}, engineer [[P|Lyle Autumnbee]]\nVisit {{DATE|Tuesday}}: 'no answer at door, neighbour said tenant lives next door'.\nLandlord: [[P|Margery Oduya]], [[A|Flat 9, Riverside House, 2 Embankment Row, Bedford MK40 2PP]].\nAgent note ([[P|Ines]]): check tenancy agreement, the ticket may have been raised against the wrong unit."),
        (A, "Sorry about that, [[P|Jarek]]. The ticket had [[A|24 Maple Crescent, Bedford MK40 3HS]] on it; I've corrected it to [[A|22 Maple Crescent, Bedford MK40 3HS]] and [[P|Lyle Autumnbee]] will come back tomorrow between 8 and 12."),
    ],
    # 28 travel, Brazil (Portuguese)
    [
        (Q, "Olá! Meu voo de Recife para Lisboa foi cancelado. Preciso remarcar para mim e para minha filha. Localizador {{ID|QX7P2L}}."),
        (D, "Reserva {{ID|QX7P2L}}, {{ORG|Atlântico Viagens}}\nPassageira 1: [[P|Maria das Graças Cavalcanti]]\nPassageira 2: [[P|Iracema Cavalcanti de Albuquerque]] (menor), nasc. [[DOB|17/06/2012]]\nEndereço: [[A|Rua do Bom Jesus 183, apto 502, Recife Antigo, Recife - PE, 50030-170]]\nCelular: [[T|+55 81 95550-4172]]\nVoo original: {{LOCATION|REC}} → {{LOCATION|LIS}}, {{DATE|12/09}}, cancelado pela companhia.\nOpções: {{DATE|13/09}} 22h10 ou {{DATE|14/09}} 23h55. Pagamento: cartão [[C|4722 4340 6487 4639]], {{PRICE|R$ 7.840,00}}.\nAutorização de viagem do pai, [[P|Rodrigo Albuquerque]], anexada."),
        (A, "Olá [[P|Maria das Graças]], consegui remarcar você e a [[P|Iracema]] para {{DATE|13/09}} às 22h10, sem custo adicional. A autorização do [[P|Rodrigo]] continua válida para a nova data."),
    ],
    # 29 logistics, UAE
    [
        (Q, "The courier says my furniture delivery address is incomplete. I'm in JLT, can you check what you have?"),
        (D, "Delivery exception, {{ORG|Falcon Freight LLC}}\nAWB {{TRACKING_NUMBER|FF-9083341726}}\nConsignee: [[P|Rashid Al-Mansoori]]\nAddress given: 'JLT, near metro'\nAddress on customer profile: [[A|Unit 2304, Jumeirah Bay Tower X2, Cluster X, Jumeirah Lake Towers, Dubai, UAE]]\nMobile: [[T|+971 50 555 3391]]\nShipper: {{ORG|Oasis Home Furnishings}}, {{LOCATION|Al Quoz}} warehouse\nItems: {{PRODUCT|Noor 3-seater sofa}}, {{PRODUCT|Sahara side table}}, 2 pieces, 84 kg.\nDriver: [[P|Imran Qureshi]]. Building requires a move-in permit from the management office; contact [[P|Yasmeen Khoury-Saab]] at the tower reception. Attempt 1 failed {{DATE|Monday}}."),
        (A, "Mr [[P|Al-Mansoori]], the shipper only passed 'JLT, near metro'. Your profile has [[A|Unit 2304, Jumeirah Bay Tower X2, Cluster X, Jumeirah Lake Towers, Dubai, UAE]]. Shall we use that? Please also get a move-in permit from the tower office, as the driver can't deliver furniture without one."),
    ],
    # 30 school admin, US
    [
        (Q, "My daughter [[P|Skye]] is starting at Lincoln Middle next month. What documents does the district need for proof of residence?"),
        (D, "Enrollment checklist, {{ORG|Riverbend Unified School District}}\nStudent: [[P|Skye Halvorsen-Mbeki]], grade 7\nParent/guardian: [[P|Drew Halvorsen]]\nNew residence: [[A|5620 Larkspur Ln, Unit B, Sacramento, CA 95822]]\nPrior school: {{ORG|Coyote Springs Middle School}}, {{LOCATION|Reno}}\nProof of residence (two needed): utility bill, lease, or property tax bill dated within 60 days. Lease signed {{DATE|August 1}} with landlord [[P|Ignatius Ferreira-Lopes]]. Immunization record pending from {{ORG|Washoe Family Clinic}}.\nRegistrar: [[P|Consuelo Arámbula]], [[T|916-555-0188]], [[E|c.arambula@riverbend-usd.example]]."),
        (A, "Hi [[P|Drew]], the district needs two proofs of residence dated within 60 days; your lease for [[A|5620 Larkspur Ln, Unit B, Sacramento, CA 95822]] counts as one, plus a utility bill. Send them and [[P|Skye]]'s immunization record to [[P|Consuelo Arámbula]], the registrar."),
    ],
    # 31 utilities, Austria (German)
    [
        (Q, "Grüß Gott, wir sind umgezogen und wollen den Stromvertrag mitnehmen. Kundennummer {{ID|KD-5520718}}."),
        (D, "Vertragsdaten, {{ORG|Alpenstrom Energie GmbH}}\nKunde: [[P|Leopoldine Hintersteiner]]\nMitbewohner: [[P|Ferdinand Gruber-Kalchbrenner]]\nAlte Anlage: [[A|Lerchenfelder Straße 88/14, 1070 Wien]]\nNeue Anlage: [[A|Hauptplatz 3, 2. Stock, 8010 Graz]]\nZählpunkt {{ID|AT0010000000000000001000004471220}}\nTarif {{PRODUCT|Öko Fix 12}}, Abschlag {{PRICE|74 €}}/Monat\nBankverbindung: [[IBAN|AT15 9863 3358 2073 9709]]\nTelefon: [[T|+43 664 5550 381]]\nAuszug laut Kunde am {{DATE|31. Jänner}}, Zählerstand {{NUMBER|40218}}. Bearbeiterin: [[P|Notburga Eder]], {{JOB_TITLE|Sachbearbeiterin Kundenservice}}. Netzbetreiber in {{LOCATION|Graz}} bestätigt Anmeldung noch nicht."),
        (A, "Grüß Gott Frau [[P|Hintersteiner]], der Tarif {{PRODUCT|Öko Fix 12}} zieht mit nach [[A|Hauptplatz 3, 2. Stock, 8010 Graz]]. Wir warten nur noch auf die Bestätigung des Netzbetreibers; Frau [[P|Eder]] meldet sich, sobald sie da ist."),
    ],
    # 32 banking, Switzerland
    [
        (Q, "I need to update the beneficiary account for my rent standing order. The landlord changed banks."),
        (D, "Standing order {{ID|SO-88213}}, {{ORG|Banque du Léman SA}}\nAccount holder: [[P|Yannick Zurbriggen]]\nAddress: [[A|Rue de Carouge 47, 1205 Genève]]\nMobile: [[T|+41 79 555 12 64]]\nPayee: [[P|Cornelia Bürgi-Stämpfli]]\nOld payee account: [[IBAN|CH77 9766 6161 5455 6637 9]]\nPayee address: [[A|Seefeldstrasse 210, 8008 Zürich]]\nAmount {{PRICE|CHF 2,350.00}} monthly on the 25th, reference 'Miete Wohnung 3.2'.\nNext execution {{DATE|25 June}}. Note: any change after the 22nd applies from the following month. Adviser: [[P|Reto Imboden]]."),
        (A, "Of course, Mr [[P|Zurbriggen]]. Send me the new account number for Ms [[P|Bürgi-Stämpfli]] before {{DATE|22 June}} and the {{DATE|25 June}} rent of {{PRICE|CHF 2,350.00}} will go to it; otherwise the change applies from July."),
        (Q, "New one is [[IBAN|DE89 0421 3087 1064 3759 29]], same name."),
        (A, "Thanks. [[IBAN|DE89 0421 3087 1064 3759 29]] is now the payee account on standing order {{ID|SO-88213}}. A cross-border SEPA fee of {{PRICE|CHF 1.50}} applies to each payment."),
    ],
    # 33 retail, Portugal (Portuguese)
    [
        (Q, "Boa tarde, a minha encomenda diz entregue mas não recebi nada. Encomenda {{ID|PT-2204918}}."),
        (D, "Encomenda {{ID|PT-2204918}}, {{ORG|Casa Lusitana Online}}\nCliente: [[P|Conceição Magalhães Brito]]\nMorada: [[A|Rua de Cedofeita 301, 3.º Esq., 4050-180 Porto]]\nTelemóvel: [[T|+351 912 555 704]]\nEmail: [[E|conceicao.mbrito@correio-norte.example]]\nArtigos: {{PRODUCT|Conjunto de panelas Douro}} ({{SKU|CL-PAN-06}}), {{PRICE|89,90 €}}\nTransportadora {{ORG|Rota Expresso}}, {{TRACKING_NUMBER|RE550812934PT}}\nEstado {{DATE|18/03}} 16:42: entregue, assinado por '[[P|Zé]]'. Estafeta [[P|Joaquim Sardinha]]: deixado com vizinho do 3.º Dto, [[P|José Teixeira Pombo]]. A cliente ligou no dia seguinte a dizer que não recebeu nada e que o vizinho estava fora."),
        (A, "Boa tarde, [[P|Conceição]]. O estafeta indica que entregou as panelas ao seu vizinho do 3.º direito, o senhor [[P|José Teixeira Pombo]]. Se ele não as tiver, abrimos já uma reclamação com a {{ORG|Rota Expresso}}."),
    ],
    # 34 healthcare, Belgium (Dutch)
    [
        (Q, "Goedemiddag, ik wil de afspraak bij de dermatoloog voor mijn man verzetten. Hij heet [[P|Pieter-Jan De Smedt]]."),
        (D, "Afsprakenoverzicht, {{ORG|AZ Scheldezicht}}\nPatiënt: [[P|Pieter-Jan De Smedt]], geboren [[DOB|04/12/1971]]\nRijksregisternummer: niet getoond\nAdres: [[A|Kerkstraat 19 bus 2, 9000 Gent, België]]\nGSM: [[T|0470 55 81 62]]\nContactpersoon: [[P|Griet Vanhoutteghem]] (echtgenote), [[E|griet.vhoutteghem@leiemail.example]]\nAfspraak: dermatologie, Dr. [[P|Sven Verhaeghe]], {{DATE|maandag 14 april}} 09:20, campus {{LOCATION|Sint-Amandsberg}}\nMedicatie: {{DRUG|methotrexaat}} 15 mg/week, {{DRUG|foliumzuur}}. Bloedafname voorafgaand aanbevolen. Opmerking van het secretariaat: de echtgenote belde op {{DATE|7 april}} om de afspraak te verzetten wegens een werkreis naar {{LOCATION|Rotterdam}}; graag een voormiddag aanbieden."),
        (A, "Goedemiddag mevrouw [[P|Vanhoutteghem]]. Ik kan de afspraak van uw man bij Dr. [[P|Verhaeghe]] verzetten naar {{DATE|dinsdag 22 april}} om 10:40. Laat hij de bloedafname een paar dagen vooraf doen."),
    ],
    # 35 HR, Sweden
    [
        (Q, "Hej! I'm going on parental leave from {{DATE|1 September}}. Who in HR handles that and what do you need from me?"),
        (D, "HR case {{ID|HR-7734}}, {{ORG|Norrsken Software AB}}\nEmployee: [[P|Björn Åkesson-Lindahl]], {{JOB_TITLE|Senior Backend Developer}}\nPersonnummer: on file (not shown)\nAddress: [[A|Götgatan 44, lgh 1102, 118 26 Stockholm]]\nPhone: [[T|070-555 18 47]]\nPartner: [[P|Maja Åkesson]]\nRequested leave: {{DATE|2025-09-01}} to {{DATE|2026-02-28}}, 100%. Manager [[P|Linnea Rautio]] approved. Forsäkringskassan form due 30 days before leave. HR partner: [[P|Oskar Mäkinen]]. Laptop to be kept; access suspended after day 30 unless requested."),
        (A, "Hej [[P|Björn]]! [[P|Oskar Mäkinen]] in HR handles your case, and [[P|Linnea Rautio]] has already approved the leave. Just send the Försäkringskassan confirmation at least 30 days before {{DATE|1 September}}."),
    ],
    # 36 car hire, Czechia
    [
        (Q, "I returned my rental at Prague airport last night but got charged a late fee. Rental {{ID|PRG-66120}}."),
        (D, "Rental agreement {{ID|PRG-66120}}, {{ORG|Vltava Car Rental s.r.o.}}\nDriver: [[P|Radovan Kučera]]\nAddress: [[A|Vinohradská 1511/230, 100 00 Praha 10, Czech Republic]]\nPhone: [[T|+420 601 555 238]]\nSecond driver: [[P|Hope Adjei-Mensah]], [[A|12 Nii Okaiman Street, East Legon, Accra, Ghana]]\nVehicle: {{PRODUCT|Škoda Octavia Combi}}, {{ID|9AK 4410}}\nDue back {{DATE|16 May}} 20:00 at {{LOCATION|Václav Havel Airport}}. Key drop logged 21:14. Late fee {{PRICE|CZK 1,200}}.\nCustomer comment: flight delayed, waited at the desk from 19:45, desk closed. Desk staff on shift: [[P|Zdeňka Horáková]]."),
        (A, "Mr [[P|Kučera]], our desk should have been open until 21:00 and the shift log shows nobody there after 19:30. I've refunded the {{PRICE|CZK 1,200}} late fee; it will show on your card in three to five days."),
    ],
    # 37 insurance, Hungary
    [
        (Q, "Our apartment was broken into while we were away. How do I claim for the stolen laptop and jewellery?"),
        (D, "Policy record, {{ORG|Duna Biztosító Zrt.}}\nPolicyholder: [[P|Szabó Eszter]]\nCo-insured: [[P|Nagy-Váradi Bence]]\nRisk address: [[A|Andrássy út 74, 3. em. 12., 1062 Budapest]]\nPhone: [[T|+36 30 555 4127]]\nEmail: [[E|eszter.szabo@pannonmail.example]]\nCover: {{PRODUCT|Otthon Prémium}}, contents {{PRICE|HUF 12,000,000}}, valuables sub-limit {{PRICE|HUF 1,500,000}}\nRequired: police report number, receipts or photos, list of items. Laptop {{PRODUCT|ThinkPad X1 Carbon}} purchased {{DATE|2023}}. Loss adjuster: [[P|Kovács Levente]]. Customer phoned on {{DATE|Sunday}} evening after returning from {{LOCATION|Lake Balaton}}."),
        (A, "I'm sorry, [[P|Eszter]]. Send the police report number, receipts or photos and a list of what was taken. Jewellery falls under the valuables limit of {{PRICE|HUF 1,500,000}}. [[P|Kovács Levente]] will contact you to inspect the flat."),
    ],
    # 38 charity, Romania
    [
        (Q, "I'd like to stop my monthly donation and get confirmation by email. Donor [[P|Ileana Constantinescu]]."),
        (D, "Donor record, {{ORG|Fundația Pași Mici}}\nName: [[P|Ileana Constantinescu]]\nAddress: [[A|Strada Episcopiei 9, ap. 14, sector 1, 010292 București]]\nEmail: [[E|ileana.constantinescu@carpati-post.example]]\nPhone: [[T|0721 555 392]]\nDirect debit {{PRICE|50 lei}}/month since {{DATE|martie 2021}}, mandate {{ID|DD-00921}}\nBank: {{ORG|Banca Dunării}}, IBAN on file.\nSponsored child programme: {{LOCATION|Iași}} day centre. Letters from centre coordinator [[P|Mihaela Dragomir-Pop]]. Donor care: [[P|Sorin Vlădescu]]. Last contact: thank-you call in {{DATE|December}}, donor mentioned a change in personal circumstances."),
        (A, "Thank you for your support over the years, [[P|Ileana]]. I've cancelled mandate {{ID|DD-00921}}; no more payments will be taken, and a confirmation is on its way to your email."),
    ],
    # 39 SaaS developer logs, Ukraine
    [
        (Q, "Our CI pipeline started failing with 401 after we rotated tokens. Can you look at the logs for project {{ID|prj-4419}}?"),
        (D, "ci-runner.log, project {{ID|prj-4419}}\n{{DATE|2025-02-14}} 10:02:11 INFO runner {{ID|r-77}} picked job #8812 triggered by [[P|Oleksandr Shevchuk]] <[[E|o.shevchuk@dnipro-devs.example]]>\n{{DATE|2025-02-14}} 10:02:14 DEBUG using REGISTRY_TOKEN=[[S|ghp_9fK2mQx7Lr0TzW4pB1vY8cN3dS6eH5aJ]]\n{{DATE|2025-02-14}} 10:02:15 ERROR push to registry failed: 401 Unauthorized from [[IP|198.51.100.212]]\n{{DATE|2025-02-14}} 10:05:40 INFO token rotation performed by [[P|Kateryna Bondarenko]] at 09:58 from [[IP|2001:db8:4a1::17]]\nSettings audit: the new token was saved in the group variables but the project overrides it with an older value. Runner version {{VERSION|16.8.1}}."),
        (A, "The job still used the old registry token because project {{ID|prj-4419}} overrides the group variable that [[P|Kateryna Bondarenko]] updated. Delete the project-level REGISTRY_TOKEN and re-run the job. Also, the log printed the token in full at DEBUG level; rotate it again and mask the variable."),
    ],
    # 40 home repair, Mexico (Spanish)
    [
        (Q, "Buenas, el técnico del aire acondicionado no llegó hoy. Teníamos cita de 9 a 11. Soy [[P|Guadalupe Xochitl Ramírez]]."),
        (D, "Orden de servicio {{ID|OS-30817}}, {{ORG|Climas del Bajío}}\nCliente: [[P|Guadalupe Xochitl Ramírez]]\nDirección: [[A|Calle Hidalgo 214, Int. 3, Col. Centro, 37000 León, Gto., México]]\nTeléfono: [[T|477 555 0193]]\nEquipo: minisplit {{PRODUCT|Frescair 12000 BTU}}, no enfría.\nTécnico asignado: [[P|Efraín Tlatelpa]]; reasignado a urgencia en {{LOCATION|Silao}} a las 08:40, sin aviso al cliente.\nSupervisor: [[P|Nayeli Cuauhtémoc Ortiz]], {{JOB_TITLE|coordinadora de servicio}}. Próximo espacio: {{DATE|jueves}} 10:00."),
        (A, "Disculpe, señora [[P|Ramírez]]. El técnico fue enviado a una urgencia y no se le avisó. Le propongo el {{DATE|jueves}} a las 10:00 con [[P|Efraín Tlatelpa]], sin costo de visita."),
    ],
    # 41 retail delivery, India, several addresses
    [
        (Q, "The delivery app shows my old Pune address even though I changed it. Order {{ID|OD-55127730}} needs to go to Bengaluru."),
        (D, "Address book, customer [[P|Shreyas Raghavendra Kulkarni]] ({{ORG|BazaarKart}})\n1. Home (old): [[A|Flat B-702, Kumar Primrose, Kharadi, Pune 411014, Maharashtra]]\n2. Home (new, added {{DATE|2 Jan}}): [[A|No. 48, 2nd Main, 5th Block, Koramangala, Bengaluru 560095]]\n3. Office: [[A|Level 6, Prestige Tech Park, Marathahalli, Bengaluru 560103]]\n4. Parents: [[A|House 11, Gokul Nagar, Dharwad 580001]]\nDefault: 1 (not updated). Mobile [[T|+91 99005 55218]]. Order {{ID|OD-55127730}}: {{PRODUCT|Prism Mixer Grinder 750W}}, {{PRICE|₹3,499}}, ships from {{LOCATION|Bhiwandi}}. Support agent [[P|Farzana]] left a note: customer called twice about the default address."),
        (A, "Hi [[P|Shreyas]], your default was still the Kharadi flat. I've set [[A|No. 48, 2nd Main, 5th Block, Koramangala, Bengaluru 560095]] as default and rerouted order {{ID|OD-55127730}} there; delivery moves by one day."),
    ],
    # 42 telecom, Pakistan
    [
        (Q, "Mera internet bohat slow hai for a week. Fibre connection in the name of [[P|Muhammad Zohaib Qureshi]]."),
        (D, "Fault ticket {{ID|FT-221908}}, {{ORG|Indus Fibre Net}}\nCustomer: [[P|Muhammad Zohaib Qureshi]]\nInstallation address: [[A|House 27-C, Street 9, F-7/2, Islamabad]]\nContact: [[T|0300 5550178]], [[E|zohaib.q@margalla-mail.example]]\nPackage: {{PRODUCT|Fibre 50}} ({{PRICE|PKR 4,999}}/month)\nLine test {{DATE|04-11}}: sync 48 Mbps, packet loss 12% at peak hours. Splitter cabinet on Street 9 shared with 40 homes.\nField engineer: [[P|Asad Mehmood Butt]]. Neighbour complaint from [[P|Sunny Farooq]] at [[A|House 29, Street 9, F-7/2, Islamabad]] on the same day."),
        (A, "Assalam o alaikum [[P|Zohaib]] sahib. The line test shows heavy packet loss at peak hours on the shared cabinet in your street, affecting your neighbours too. [[P|Asad Mehmood Butt]] will replace the splitter on {{DATE|Thursday}}; we'll credit a week of {{PRODUCT|Fibre 50}}."),
    ],
    # 43 remittance, Bangladesh
    [
        (Q, "I sent money to my mother in Sylhet, she says the agent told her the name doesn't match. Transfer {{ID|RM-7731204}}."),
        (D, "Transfer {{ID|RM-7731204}}, {{ORG|Meghna Remit Ltd}}\nSender: [[P|Rafiqul Islam Chowdhury]], [[A|81 Brick Lane, London E1 6QL]], [[T|07700 900734]]\nSender card: [[C|5139 5877 8046 3823]]\nRecipient (as entered): Mst. [[P|Rokeya Begum]]\nRecipient (on ID): Most. [[P|Rokeya Khatun Begum]]\nRecipient address: [[A|Village Kamalbazar, Dakshin Surma, Sylhet 3100, Bangladesh]]\nAmount {{PRICE|£300.00}} → {{PRICE|BDT 46,950}}, cash pickup at {{ORG|Surma Agent Point 14}}.\nHold reason: name mismatch. Compliance: [[P|Tahmina Akter]]."),
        (A, "Hi [[P|Rafiqul]], the name you entered doesn't quite match your mother's ID. I've corrected the recipient to Most. [[P|Rokeya Khatun Begum]] with [[P|Tahmina Akter]]'s approval, so she can collect the {{PRICE|BDT 46,950}} today."),
    ],
    # 44 hotel, Sri Lanka
    [
        (Q, "We booked two rooms in Galle for a wedding party. Can you put them next to each other? Booking under [[P|Dilrukshi Wickramasinghe]]."),
        (D, "Group booking {{ID|GB-1044}}, {{ORG|Lighthouse Bay Hotel}}, {{LOCATION|Galle Fort}}\nLead guest: [[P|Dilrukshi Wickramasinghe]], [[A|No. 12/4, Ward Place, Colombo 07, Sri Lanka]], [[T|+94 77 555 3190]]\nRoom 1: [[P|Dilrukshi Wickramasinghe]], [[P|Chaminda Perera]]\nRoom 2: [[P|Nirosha Senanayake]], [[P|Tharindu Senanayake]] and child\nDates: {{DATE|6 December}} to {{DATE|9 December}}\nNote from wedding planner [[P|Roshan Jayasuriya-Fonseka]]: the couple's families want adjacent rooms with sea view. Rate {{PRICE|LKR 38,500}} per night. Payment by card [[C|4308 8373 0864 9983]]."),
        (A, "Hello [[P|Dilrukshi]], I've placed both rooms next to each other on the second floor, with sea view, for {{DATE|6 December}} to {{DATE|9 December}}. [[P|Roshan]] has been copied in."),
    ],
    # 45 logistics, Hong Kong / China
    [
        (Q, "My package to my grandmother in Guangzhou was returned to sender. Why? Waybill {{TRACKING_NUMBER|SF1420876631}}."),
        (D, "Return notice, {{ORG|Pearl River Express}}\nWaybill {{TRACKING_NUMBER|SF1420876631}}\nSender: [[P|Wong Ka-yan]] ([[P|Mandy]]), [[A|Flat 12B, Tower 3, Laguna Verde, 8 Laguna Verde Avenue, Hung Hom, Kowloon, Hong Kong]], [[T|+852 5550 2817]]\nRecipient: [[P|Li Xiuying]] 李秀英, [[A|广州市天河区体育西路191号中石化大厦B座1803室]]\nRecipient phone: [[T|138 0555 7720]]\nReason: prohibited item in parcel, lithium battery power bank {{PRODUCT|VoltPal 20000}}.\nReturned {{DATE|2025-03-22}}. Handler: [[P|Chan Siu-fung]]. Customs inspection at {{LOCATION|Lok Ma Chau}} opened the parcel and removed nothing; the sender may resend once the battery is taken out."),
        (A, "Hi [[P|Mandy]], the parcel came back because it contained a power bank, which can't be sent by this service. Remove the {{PRODUCT|VoltPal 20000}} and we'll resend to your grandmother free of charge."),
    ],
    # 46 school, Vietnam
    [
        (Q, "Tôi muốn hỏi về học phí học kỳ 2 của con tôi, [[P|Nguyễn Minh Khôi]], lớp 4A."),
        (D, "Student fee statement, {{ORG|Saigon Bilingual Academy}}\nStudent: [[P|Nguyễn Minh Khôi]], Grade 4A, DOB [[DOB|15/01/2016]]\nParent: [[P|Trần Thị Thu Hà]], [[E|thuha.tran@songhan-mail.example]], [[T|090 555 1836]]\nAddress: [[A|18 Đường số 7, Phường An Phú, Thành phố Thủ Đức, TP. Hồ Chí Minh]]\nSemester 2 tuition {{PRICE|68,000,000 VND}}, bus {{PRICE|9,500,000 VND}}, lunch {{PRICE|6,200,000 VND}}\nSibling discount 5% (sister [[P|Nguyễn Bảo Ngọc]], Grade 1). Due {{DATE|15 January}}. Accountant: [[P|Phạm Quốc Huy]]."),
        (A, "Chào chị [[P|Thu Hà]]. Semester 2 fees for [[P|Minh Khôi]] total {{PRICE|83,700,000 VND}} before the 5% sibling discount; payment is due by {{DATE|15 January}}."),
    ],
    # 47 HR recruiting, Philippines
    [
        (Q, "Good day po! I passed the final interview last week. When is my onboarding and what requirements do I bring?"),
        (D, "Offer tracker, {{ORG|Bayanihan Contact Solutions}}\nCandidate: [[P|Ma. Cristina Dela Cruz-Bautista]]\nAddress: [[A|Blk 14 Lot 7, Mabini St., Brgy. San Isidro, Cainta, Rizal 1900]]\nMobile: [[T|0917 555 4402]]\nRole: {{JOB_TITLE|Customer Service Representative}}, account {{ORG|Northwind Travel}}\nOnboarding: {{DATE|June 2}}, 8:00 AM, {{LOCATION|Ortigas}} site, 12th floor.\nRequirements: NBI clearance, SSS, PhilHealth, Pag-IBIG and TIN numbers, 2x2 photos, medical results.\nRecruiter: [[P|Jericho Manalastas]]. Team lead: [[P|Divina Gracia Tolentino]]. Referral bonus to [[P|Bong Revilla-Santos]]."),
        (A, "Congratulations, [[P|Cristina]]! Onboarding is on {{DATE|June 2}} at 8:00 AM at the {{LOCATION|Ortigas}} site. Bring your NBI clearance, government ID numbers, 2x2 photos and medical results; [[P|Jericho Manalastas]] will meet you at reception."),
    ],
    # 48 travel, Indonesia
    [
        (Q, "Saya mau ganti nama penumpang, ada typo. Booking for my father, the ticket says [[P|Soeharjo]] but it should be [[P|Soeharjono]]."),
        (D, "PNR {{ID|KX4T9M}}, {{ORG|Nusantara Air}}\nPassenger: [[P|SOEHARJO/BAMBANG]] MR\nCorrect name per passport: [[P|Bambang Soeharjono]]\nContact: [[P|Ratna Dewi Lestari]] (daughter), [[T|0812 5550 9731]], [[E|ratna.lestari@merapi-mail.example]]\nAddress: [[A|Jl. Kaliurang Km 7 No. 23, Sleman, Yogyakarta 55581]]\nFlight {{ID|NA 642}} {{LOCATION|YIA}}-{{LOCATION|CGK}} {{DATE|20 Juli}}\nName change rule: up to 3 characters free; otherwise reissue fee {{PRICE|IDR 250,000}}. Agent: [[P|Yohanes Tanoesoedibjo]]. Remark: the booking was made online by the daughter, who typed the surname from memory; passport copy received by e-mail on {{DATE|3 Juli}}."),
        (A, "Hi [[P|Ratna]], adding 'no' to make the surname [[P|Soeharjono]] is within the three-character rule, so it's free. The corrected ticket for [[P|Bambang Soeharjono]] will be re-sent to your e-mail."),
    ],
    # 49 healthcare, Thailand
    [
        (Q, "I'm a tourist and I need to get my travel insurer to pay the hospital directly. What do you have on file for me?"),
        (D, "Patient registration, {{ORG|Andaman Coast International Hospital}}\nPatient: [[P|Rhiannon Featherstonehaugh]], DOB [[DOB|08-Feb-1990]], passport ending 4471\nHome address: [[A|3 Larch Close, Keswick CA12 4JT, United Kingdom]]\nLocal stay: [[A|Villa 5, 140/12 Moo 3, Kamala, Kathu, Phuket 83150]]\nPhone: [[T|+66 81 555 2094]]\nDiagnosis: fractured wrist, cast applied. Drugs dispensed: {{DRUG|ibuprofen}}, {{DRUG|paracetamol}}.\nInsurer: {{ORG|Wayfarer Travel Cover}}, policy {{ID|WTC-88120931}}; guarantee of payment not yet received. International desk: [[P|Siriporn Chaiyaphum]], [[P|Kittisak]] (night shift)."),
        (A, "Hi [[P|Rhiannon]], we have your insurer as {{ORG|Wayfarer Travel Cover}}, policy {{ID|WTC-88120931}}, but they haven't sent a guarantee of payment yet. [[P|Siriporn Chaiyaphum]] at our international desk will call them this morning."),
    ],
    # 50 gym, Turkey and Greece chat
    [
        (Q, "[09:12] [[P|kerem]]: merhaba, can I bring my friend to the pool on saturday?\n[09:12] [[P|kerem]]: her name is [[P|chrysanthi papadopoulou-kostaki]]"),
        (D, "Membership note, {{ORG|Boğaz Sports Club}}\nMember: [[P|Kerem Yıldırım-Aksoy]], {{ID|BSC-20917}}\nAddress: [[A|Bağdat Caddesi No: 214 Daire 9, Caddebostan, 34728 Kadıköy/İstanbul]]\nPhone: [[T|0532 555 41 87]]\nGuest policy: 2 guest passes per month, {{PRICE|₺350}} each, ID required at reception; guests under 18 need a parent present.\nGuest passes used this month: 1 ([[P|Selin Öztürk]], {{DATE|4 May}}).\nReception manager: [[P|Gülşen Kaya]]. Pool closed for maintenance {{DATE|Sunday}} morning."),
        (A, "Merhaba [[P|Kerem]]! Yes, you have one guest pass left this month, so [[P|Chrysanthi]] can join you on {{DATE|Saturday}} for {{PRICE|₺350}}. She'll need to show ID at reception."),
    ],
    # 51 tax prep, US SSN
    [
        (Q, "Can you check whether my wife's SSN was entered correctly on our joint return? The IRS rejected the e-file."),
        (D, "E-file rejection, {{ORG|Bluegrass Tax Partners}}\nTaxpayer: [[P|Marcus Delacroix-Whitaker]], SSN [[SSN|431-77-2098]], DOB [[DOB|05/30/1981]]\nSpouse: [[P|Autumn Delacroix-Whitaker]], SSN entered [[SSN|431-77-2089]], DOB [[DOB|12/02/1983]]\nAddress: [[A|2907 Old Frankfort Pike, Lexington, KY 40510]]\nReject code {{ID|IND-032}}: spouse SSN and name do not match IRS records.\nPreparer: [[P|Wendell Okafor-Briggs]], {{JOB_TITLE|CPA}}. Client intake by [[P|Brooklyn]] on {{DATE|March 4}}. Software {{PRODUCT|TaxDesk Pro}} {{VERSION|2024.3}}. 'Please {{WORD|bill me monthly}}' was written in the engagement notes by the client; billing set to invoice."),
        (A, "Mr [[P|Delacroix-Whitaker]], the rejection says your spouse's SSN doesn't match IRS records; the last two digits may have been swapped at intake. Please confirm [[P|Autumn]]'s number against her card and [[P|Wendell Okafor-Briggs]] will resubmit today."),
    ],
    # 52 benefits form, UK NINO
    [
        (Q, "I'm helping my dad fill in his Pension Credit form. Where does his National Insurance number go and do you need my details as well?"),
        (D, "Draft claim (saved), {{ORG|Pension Service}} online form\nClaimant: Mr [[P|Desmond Fitzpatrick-Oyelowo]]\nNational Insurance number: [[NINO|JT 48 91 06 B]]\nDate of birth: [[DOB|19 October 1952]]\nAddress: [[A|Flat 6, Harrowby Court, 31 Moor Road, Rochdale OL11 3DF]]\nTelephone: [[T|01632 960 481]]\nHelper: [[P|Órlaith Fitzpatrick]], relationship: daughter, [[T|07700 900926]]\nPartner: none. Savings: {{PRICE|£4,200}}. Private pension from {{ORG|Lancashire Mill Workers' Fund}}. Section 7 incomplete."),
        (A, "His NI number goes in section 2 and it's already filled in. As the helper you only need your name and phone number in section 9, [[P|Órlaith]]; section 7 still needs his private pension amount."),
    ],
    # 53 password reset logs, secrets
    [
        (Q, "A user says she got a password reset email she didn't request. Can you check the logs for [[P|jasmine]]?"),
        (D, "identity-service.log\n{{DATE|2025-04-02}} 17:40:03 reset_requested user=[[E|jasmine.abernathy-kwok@harbourlight.example]] src_ip=[[IP|203.0.113.61]] ua=\"Mozilla/5.0\"\n{{DATE|2025-04-02}} 17:40:03 email_sent template=reset to=[[E|jasmine.abernathy-kwok@harbourlight.example]] token=[[S|rst_3ZqP8vW1nKx6Tb0YcLm9]]\n{{DATE|2025-04-02}} 17:41:55 reset_requested user=[[E|j.kwok@harbourlight.example]] src_ip=[[IP|203.0.113.61]] result=unknown_user\n{{DATE|2025-04-02}} 17:42:30 reset_requested user=[[E|jasmine.kwok@harbourlight.example]] src_ip=[[IP|203.0.113.61]] result=unknown_user\n{{DATE|2025-04-02}} 18:05:12 login_success user=[[E|jasmine.abernathy-kwok@harbourlight.example]] src_ip=[[IP|192.0.2.230]] mfa=true\nSecurity note by [[P|Oluwadamilare Fashola]]: source IP tried three address variants in two minutes, pattern of enumeration; the token was never used. Ticket {{ID|SEC-4471}} closed as benign after the user confirmed she requested nothing."),
        (A, "The reset for [[P|Jasmine Abernathy-Kwok]] came from [[IP|203.0.113.61]], which also tried two other spellings of her address, so it looks like someone guessing accounts. The link was never used and she signed in normally later with MFA. No action needed beyond blocking that IP; she can {{WORD|mark as read}} the alert in her inbox."),
    ],
    # 54 lettings, Argentina (Spanish)
    [
        (Q, "Hola, quiero saber si el depósito del departamento ya fue devuelto. Me fui el mes pasado."),
        (D, "Legajo de alquiler {{ID|ALQ-3310}}, {{ORG|Inmobiliaria del Plata}}\nInquilina: [[P|Florencia Bustamante Ocampo]]\nUnidad: [[A|Av. Santa Fe 2841, piso 7 depto. C, C1425BGF Buenos Aires]]\nGarante: [[P|Héctor Ocampo]], [[A|Calle 48 N° 615, B1900 La Plata]]\nCelular: [[T|+54 9 11 5555-0372]]\nDepósito: {{PRICE|USD 900}}. Entrega de llaves {{DATE|30 de abril}}, acta firmada por [[P|Bautista Iribarne]].\nPropietaria: [[P|Maite Echeverría]]. Observación: pintura en living pendiente, descuento estimado {{PRICE|ARS 180.000}}. Transferencia a [[E|florbustamante@riodelplata-mail.example]] pedida el {{DATE|5 de mayo}}."),
        (A, "Hola [[P|Florencia]]. El depósito de {{PRICE|USD 900}} está aprobado menos el arreglo de pintura del living. La propietaria, [[P|Maite Echeverría]], firmará la transferencia esta semana."),
    ],
    # 55 telecom, Canada apartment
    [
        (Q, "I'm moving across the hall in my building and want to keep internet. Does that count as a move?"),
        (D, "Service record, {{ORG|Maple Leaf Broadband}}\nCustomer: [[P|Juniper Nakashima-Boucher]]\nService address: [[A|1405-88 Harbord Street, Toronto, ON M5S 1G5]]\nNew address: [[A|1410-88 Harbord Street, Toronto, ON M5S 1G5]]\nPhone: [[T|416-555-0127]]\nPlan: {{PRODUCT|Fibre 500}}, {{PRICE|$85/mo}}, modem {{PRODUCT|MLB Hub 4}} serial {{ID|MLB4-0027713}}\nCo-account: [[P|Gideon Abramowitz]]\nMove policy: any change of unit is a move; technician visit {{PRICE|$50}} waived within the same building. Superintendent contact: [[P|Bogdan Lysenko]], riser room access needed."),
        (A, "Yes, [[P|Juniper]], a new unit counts as a move, but as you're staying in the same building the {{PRICE|$50}} visit is waived. A technician will switch the line from 1405 to 1410; please let [[P|Bogdan Lysenko]] know they'll need riser access."),
    ],
    # 56 vet, Ireland Eircode
    [
        (Q, "Our dog Rocky needs his booster and I want to pay by card over the phone. Account is under [[P|Eoghan Mac Giolla Bhríde]]."),
        (D, "Client record, {{ORG|Shannonside Veterinary Hospital}}\nOwner: [[P|Eoghan Mac Giolla Bhríde]]\nCo-owner: [[P|Clodagh Ní Mhaoldhomhnaigh]]\nAddress: [[A|Cnoc na Sí, Ballyvaughan Road, Kinvara, Co. Galway H91 C2X8]]\nPhone: [[T|091 555 702]]\nPet: Rocky, Labrador, 7 yrs. Vaccines: {{PRODUCT|Nobivac DHPPi}} due {{DATE|10 June}}.\nCard on file: [[C|5093 6971 8536 2928]] (exp {{DATE|11/26}})\nNote: dog reacts to {{DRUG|meloxicam}}, use {{DRUG|robenacoxib}} instead. Vet: [[P|Ruairí Ó Dubhghaill]]."),
        (A, "Thanks, [[P|Eoghan]]. Rocky's booster is due {{DATE|10 June}}. I can take payment on the card ending 2928, and [[P|Ruairí]] has him booked for {{DATE|Friday}} at 16:00."),
    ],
    # 57 HR complaint letter, Germany multi-line
    [
        (Q, "Please summarise the letter we received from a former employee about her final pay."),
        (D, "[[P|Dragana Milošević-Brandt]]\n[[A|Lindenhof 7\n44137 Dortmund]]\n\n{{ORG|Ruhrtal Logistik GmbH}}\nPersonalabteilung\n\n{{DATE|Dortmund, 18. März 2025}}\n\nSehr geehrte Frau [[P|Wienholt]],\n\nmein Arbeitsverhältnis als {{JOB_TITLE|Disponentin}} endete am {{DATE|28. Februar}}. Die Schlussabrechnung enthält weder die 9 offenen Urlaubstage noch die Überstunden aus Januar. Bitte überweisen Sie den Betrag bis {{DATE|31. März}} auf [[IBAN|DE79 5793 9531 3600 0419 12]]. Ich bin erreichbar unter [[T|0176 5550 3381]].\n\nMit freundlichen Grüßen\n[[P|Dragana Milošević-Brandt]]"),
        (A, "[[P|Dragana Milošević-Brandt]], a former dispatcher, says her final payslip for February is missing 9 days of unused leave and January overtime, and asks for payment by {{DATE|31 March}} to her bank account. The letter is addressed to Ms [[P|Wienholt]] in HR."),
    ],
    # 58 logistics Nigeria Abuja, partial address
    [
        (Q, "The courier says they couldn't find the flat at [[A|9 Harbour Row]]? I'm confused, I live in {{LOCATION|Abuja}}. My name is [[P|Wisdom Okonjo-Eze]]."),
        (D, "Delivery attempt log, {{ORG|Swiftline Couriers NG}}\nWaybill {{TRACKING_NUMBER|SWL-4410927}}\nRecipient: [[P|Wisdom Okonjo-Eze]], [[T|0809 555 2716]]\nAddress on label: the flat at [[A|9 Harbour Row]] (incomplete, no city)\nAddress on customer profile: [[A|Block C, Flat 4, 22 Aminu Kano Crescent, Wuse II, Abuja]]\nSender: {{ORG|Harbour Row Books}}, {{LOCATION|Port Harcourt}}\nAttempt {{DATE|Tuesday}}: rider [[P|Ibrahim Danjuma]] went to sender's own street. Dispatcher: [[P|Chiamaka Nwachukwu-Ade]]."),
        (A, "Sorry, [[P|Wisdom]]. The shop put a partial address on the label, so the rider went back to their own street in {{LOCATION|Port Harcourt}}. I've updated the waybill to [[A|Block C, Flat 4, 22 Aminu Kano Crescent, Wuse II, Abuja]]."),
    ],
    # 59 retail card dispute, UK chat with word-names
    [
        (Q, "[11:20] customer: hi, I got charged twice for one order, can you refund one?\n[11:21] customer: its [[P|Chip Hathersage]] btw"),
        (D, "Payments view, {{ORG|Greenhouse & Grove Garden Centre}} online\nCustomer: [[P|Christopher Hathersage]] ('[[P|Chip]]')\nAddress: [[A|Rosebank Cottage, 4 Kiln Lane, Hay-on-Wye, Hereford HR3 5AB]]\nCharges on card [[C|6011 7087 3359 2481]]:\n{{DATE|12/05}} 10:02 {{PRICE|£64.00}}, order {{ID|GG-10332}}, {{PRODUCT|David Austin climbing rose}} x2, status captured\n{{DATE|12/05}} 10:02 {{PRICE|£64.00}}, order {{ID|GG-10332}}, status captured (duplicate)\nGateway note: duplicate capture caused by timeout retry. Staff: [[P|Mabel Honeysett]]. Customer asked that the {{WORD|rose bush}} be left by the side gate."),
        (A, "Hi [[P|Chip]], you're right: the payment was taken twice because of a timeout. I've refunded one {{PRICE|£64.00}} charge to your card; it takes three to five working days. The roses will be left by the side gate as you asked."),
    ],
    # 60 education, university admissions, Ghana
    [
        (Q, "I haven't received my offer letter by post. Can you check the address you have? Applicant number {{ID|UG-24-08812}}."),
        (D, "Applicant record, {{ORG|University of the Coast}} admissions\nApplicant: [[P|Afia Frimpong-Manso]], DOB [[DOB|22/07/2006]]\nPostal: [[A|PO Box KA 9182, Airport, Accra]]\nResidential: [[A|House No. 17, Sakumono Estates, Tema]]\nPhone: [[T|024 555 0918]]\nEmail: [[E|afia.fm@volta-mail.example]]\nGuardian: [[P|Kofi Manso]]\nProgramme: BSc Nursing, offer issued {{DATE|14 August}}, posted to postal address. Admissions officer: [[P|Efua Ansah-Quartey]]. Offer letters are sent by registered post and normally arrive within ten working days; a digital copy can be issued on request."),
        (A, "Hi [[P|Afia]], the offer was posted on {{DATE|14 August}} to [[A|PO Box KA 9182, Airport, Accra]]. I've also e-mailed you a PDF copy, which is valid for registration."),
    ],
    # 61 SaaS, shared credentials in ticket
    [
        (Q, "Our office manager pasted the Wi-Fi and router admin passwords into a support ticket by mistake. Can you make sure they're removed?"),
        (D, "Ticket {{ID|HD-30118}}, {{ORG|Kestrel IT Managed Services}}\nFrom: [[P|Farideh Tehrani-Moghadam]] <[[E|farideh.tm@meridianlaw.example]]>\nSite: [[A|Suite 4, Level 2, 190 Queen Street, Auckland 1010, New Zealand]]\nMessage: 'Hi, the new printer won't join the network. Guest Wi-Fi is Meridian-Guest, password [[S|Kowhai!Tide2291]], router admin login is admin / [[S|rT6v-Qp0z-Hm3k]]. Router is the {{PRODUCT|Ubiquiti Dream Machine}} on firmware {{VERSION|3.2.9}}. Printer IP [[IP|192.0.2.57]].'\nAssigned engineer: [[P|Tavita Leiataua]]. Escalation: [[P|Ariel Ben-Haim]], {{JOB_TITLE|service desk lead}}."),
        (A, "[[P|Farideh]], I've redacted both passwords from ticket {{ID|HD-30118}}, but they were visible to our service desk, so please change the Wi-Fi and router admin passwords now. [[P|Tavita Leiataua]] will connect the printer remotely once that's done."),
    ],
    # 62 rural delivery, New Zealand, Māori names
    [
        (Q, "Farm supplies order keeps getting left at the wrong gate. We're on a rural road, RD 2."),
        (D, "Customer note, {{ORG|Tōtara Rural Supplies}}\nCustomer: [[P|Whetu Tamihana-Rangi]]\nDelivery: [[A|1187 Kaipaki Road, RD 2, Cambridge 3494]]\nNeighbouring gate (wrong drops): [[A|1191 Kaipaki Road, RD 2, Cambridge 3494]], owner [[P|Aperahama Ngāwhika]]\nPhone: [[T|021 555 0447]]\nOrders: {{PRODUCT|Gallagher M1800 energiser}}, {{SKU|GAL-M1800}}, fence standards x200, {{PRICE|NZ$1,420}}\nDriver: [[P|Keanu Kalanianaole]]. Instruction: blue gate with the tractor tyre, not the white gate at 1191. Account manager: [[P|Moana Parekowhai]]."),
        (A, "Kia ora [[P|Whetu]]. I've added 'blue gate with the tractor tyre' to the delivery note for [[A|1187 Kaipaki Road, RD 2, Cambridge 3494]] and told [[P|Keanu]] directly. Anything left at [[P|Aperahama]]'s gate will be collected by us."),
    ],
    # 63 legal, Italy, inheritance
    [
        (Q, "My father died in March and I need to know which documents the notary wants for the succession. I'm [[P|Ludovica Santangelo]]."),
        (D, "Pratica di successione {{ID|SUC-2025-0117}}, {{ORG|Studio Notarile Associato Ruggeri & Ferlito}}\nDefunto: [[P|Ottavio Santangelo]], nato il [[DOB|02/11/1940]], deceduto il {{DATE|14/03/2025}}\nUltima residenza: [[A|Corso Vittorio Emanuele II 204, 10138 Torino]]\nEredi: [[P|Ludovica Santangelo]] (figlia), [[A|Via Nizza 31, 10125 Torino]]; [[P|Corrado Santangelo]] (figlio), [[A|Calle de Toledo 88, 28005 Madrid, Spagna]]\nImmobile: [[A|Borgata Pian del Frais 3, 10050 Chiomonte TO]]\nDocumenti richiesti: certificato di morte, atti di proprietà, estratti conto. Referente: notaio [[P|Beltrami]]; segreteria [[P|Graziella Foti]]."),
        (A, "Gentile [[P|Ludovica]], the notary needs the death certificate, the property deeds for the house in {{LOCATION|Chiomonte}} and the flat in {{LOCATION|Torino}}, and recent bank statements. Your brother [[P|Corrado]] can sign by proxy from {{LOCATION|Madrid}}."),
    ],
    # 64 utilities, France, address correction
    [
        (Q, "Bonjour, le relevé de gaz indique le mauvais appartement, c'est le 3e gauche et pas le 3e droite."),
        (D, "Point de livraison {{ID|PDL 21 4470 9918 2231}}, {{ORG|Gazelec Provence}}\nTitulaire : M. [[P|Anselme Bouchareb-Lefort]]\nAdresse actuelle (erronée) : [[A|Résidence Les Amandiers, bât. B, 3e étage droite, 12 avenue de la Capelette, 13010 Marseille]]\nAdresse correcte : [[A|Résidence Les Amandiers, bât. B, 3e étage gauche, 12 avenue de la Capelette, 13010 Marseille]]\nVoisin concerné : Mme [[P|Yasmina Haddouche]]\nTél. : [[T|04 91 55 50 27]]\nConsommation facturée {{DATE|janvier}} : {{NUMBER|1 204}} kWh. Contrat {{PRODUCT|Tarif Confort Gaz}}."),
        (A, "Bonjour M. [[P|Bouchareb-Lefort]], j'ai corrigé votre point de livraison vers le 3e étage gauche. Les factures depuis {{DATE|janvier}} seront recalculées avec votre propre compteur; Mme [[P|Haddouche]] sera aussi informée."),
    ],
    # 65 car hire, Korea and Hawaii
    [
        (Q, "I rented a car in Honolulu last month and was charged for a toll pass I didn't use. Can I get that refunded?"),
        (D, "Rental {{ID|HNL-448812}}, {{ORG|Aloha Island Car Rental}}\nRenter: [[P|Seo Jae-won]]\nHome: [[A|302-ho, 17 Haeundaehaebyeon-ro 298beon-gil, Haeundae-gu, Busan 48099, South Korea]]\nLocal: [[A|2552 Kalākaua Ave, Room 1418, Honolulu, HI 96815]]\nPhone: [[T|+82 10-5550-7716]]\nAdditional driver: [[P|Makana Kealoha-Pua]]\nVehicle: {{PRODUCT|Toyota Corolla}}, pickup {{LOCATION|Daniel K. Inouye International Airport}}\nExtras: toll pass {{PRICE|$11.99}}/day x5 (added at counter by [[P|Pualani]]). Card [[C|5164 0873 9620 6771]]. Note: Oahu has no toll roads."),
        (A, "Mr [[P|Seo]], you're right: there are no toll roads on {{LOCATION|Oahu}} and the pass shouldn't have been added. I've refunded {{PRICE|$59.95}} to your card."),
    ],
    # 66 Hebrew/Persian names, property management
    [
        (Q, "Please check who is listed as the emergency contact for the tenant in 4C."),
        (D, "Tenant directory, {{ORG|Hudson Crest Residences}}\nUnit 4C: [[P|Noa Ben-Ami]], [[A|410 W 57th St, Apt 4C, New York, NY 10019]], [[T|212-555-0164]]\nEmergency contact: [[P|Yitzhak Ben-Ami]], [[T|646-555-0190]], [[E|yitzhak.benami@galil-mail.example]]\nUnit 4D: [[P|Shirin Farahani]], [[A|410 W 57th St, Apt 4D, New York, NY 10019]]\nEmergency contact: [[P|Kourosh Farahani]], [[T|917-555-0133]]\nSuperintendent: [[P|Reuben Castellanos-Mejía]]. Lease renewals due {{DATE|October 31}}. Boiler inspection on {{DATE|Sept 12}}, residents notified."),
        (A, "The emergency contact for unit 4C, [[P|Noa Ben-Ami]], is [[P|Yitzhak Ben-Ami]] at [[T|646-555-0190]]."),
    ],
    # 67 insurance, Denmark/Finland
    [
        (Q, "I had water damage in my summer cottage. Is that covered by my house insurance or do I need separate cover?"),
        (D, "Policy overview, {{ORG|Nordisk Tryg Forsikring}}\nPolicyholder: [[P|Sørensen Mikkel Juhl]] (listed surname first)\nMain residence: [[A|Vesterbrogade 118, 3. th., 1620 København V, Denmark]]\nSummer house: [[A|Klitvej 22, Blokhus, 9492 Denmark]]\nSpouse: [[P|Aino Järvinen-Sørensen]], [[E|aino.jarvinen@saimaa-mail.example]]\nPhone: [[T|+45 20 55 51 83]]\nCover: {{PRODUCT|Hus Plus}} main residence; summer house insured separately under {{ID|SH-77104}}, water damage included, excess {{PRICE|DKK 5,000}}. Claims handler: [[P|Rasmus Kjærgaard]]."),
        (A, "Your summer house in {{LOCATION|Blokhus}} has its own policy, {{ID|SH-77104}}, which covers water damage with a {{PRICE|DKK 5,000}} excess. [[P|Rasmus Kjærgaard]] can open the claim; photos of the damage will speed it up."),
    ],
    # 68 logistics Poland, warehouse CSV
    [
        (Q, "Which customers on today's route in Kraków still need a delivery slot confirmed?"),
        (D, "route_KRK_{{DATE|2025-06-03}}.csv\nstop,recipient,address,phone,slot\n1,[[P|Zofia Kaczmarczyk]],\"[[A|ul. Karmelicka 45/12, 31-128 Kraków]]\",[[T|+48 512 555 402]],09-11\n2,[[P|Stanisław Wróbel]],\"[[A|os. Centrum C 7/33, 31-929 Kraków]]\",[[T|+48 600 555 119]],PENDING\n3,[[P|Halina Nowicka-Dudek]],\"[[A|ul. Zabłocie 20/4, 30-701 Kraków]]\",[[T|+48 698 555 734]],PENDING\n4,{{ORG|Apteka Pod Lwem}},\"{{LOCATION|Rynek Główny}}\",,11-13\nDriver: [[P|Krystian Mazurek]], van {{ID|KR 7H410}}. Dispatcher notes: stop 3 has a gate code, ask the customer on the phone; stop 2 prefers afternoon. Customers with PENDING slots must be called before 08:30 or moved to tomorrow's route."),
        (A, "Two stops still need a slot: [[P|Stanisław Wróbel]] (stop 2, prefers the afternoon) and [[P|Halina Nowicka-Dudek]] (stop 3, ask her for the gate code when you call)."),
    ],
    # 69 gym, Arabic names, UAE / Jordan
    [
        (Q, "Can I transfer my remaining personal training sessions to my sister? She's joining next week."),
        (D, "Member account, {{ORG|Desert Rose Fitness}} ({{LOCATION|Abu Dhabi}})\nMember: [[P|Noor Al-Huda Khalifeh]]\nAddress: [[A|Villa 31, Street 12, Khalifa City A, Abu Dhabi, UAE]]\nMobile: [[T|+971 52 555 8120]]\nPT package: {{PRODUCT|PT 20 Pack}}, 7 sessions left, expires {{DATE|30 September}}\nSister (prospective member): [[P|Rahaf Khalifeh]], previously at [[A|Building 9, Al-Rabiah Street, Amman 11181, Jordan]]\nPolicy: sessions may be transferred once to an immediate family member who is an active member. Trainer: [[P|Yousef Al-Zaabi]]. Front desk: [[P|Reem]]."),
        (A, "Yes, [[P|Noor]], the 7 sessions can be moved once to [[P|Rahaf]] as soon as her membership is active. [[P|Yousef Al-Zaabi]] can keep training her if she likes."),
    ],
    # 70 school trip consent, UK, Irish/Scottish names
    [
        (Q, "I submitted the consent form for the Year 8 trip but the school says they don't have it. Can you check? Pupil is [[P|Fionnuala McAuley-Drummond]]."),
        (D, "Trip consent submissions, {{ORG|St Columba's High School}}, trip to {{LOCATION|Edinburgh Castle}}, {{DATE|14 June}}\npupil,form,parent,phone,submitted\n[[P|Fionnuala McAuley-Drummond]],8R,[[P|Torquil McAuley]],[[T|07700 900358]],{{DATE|2025-05-30}} (saved, not sent)\n[[P|Lachlan O'Rourke]],8R,[[P|Catriona O'Rourke]],[[T|07700 900412]],{{DATE|2025-05-28}}\n[[P|Oisín Kavanagh-Sutherland]],8T,[[P|Brigid Kavanagh]],[[T|07700 900587]],{{DATE|2025-05-29}}\nMedical notes for the trip go to Mrs [[P|Dalgleish]] at the school office. Forms saved but not sent are not visible to the trip leader. Deadline for all forms and payments is {{DATE|7 June}}; the coach leaves from the school car park at 07:45."),
        (A, "Hi [[P|Torquil]], the form for [[P|Fionnuala]] was saved on {{DATE|30 May}} but never sent, so the trip leader can't see it. Open it again and press 'Submit'; the deadline is {{DATE|7 June}}."),
    ],
]
