"""Write bench/data/pii.jsonl: a hand-written, labelled set for measuring the PII redactor.

    python bench/data/make_pii_set.py

Every record below is hand-written fake text of the kind a support/RAG assistant's traces carry
(user questions, retrieved documents, assistant answers). No real person's data is used: names
are invented, phone numbers sit in reserved/fictional ranges where a country has one, cards are
well-known test numbers or Luhn-completed fakes, IBANs get their mod-97 check digits computed
here, IPs are mostly documentation ranges, secrets are random-looking fakes.

Markup inside a record's text:

    [[TYPE|value]]   a PII entity to be redacted (TYPE may be an alias, see ENTITY_ALIASES)
    {{KIND|value}}   a negative: text a good redactor must leave alone (see NEGATIVE_ALIASES)

Value macros: in an IBAN, "??" is replaced by the computed check digits; in a CREDIT_CARD, a
trailing "?" is replaced by the Luhn check digit. Everything else is literal.

The script parses the markup into text + offsets (Python str offsets, end exclusive), checks the
invariants (offsets, no overlaps, Luhn, mod-97, SSN/NINO validity, every occurrence of a labelled
value labelled, minimum counts per type), assigns dev/test deterministically from a salted hash
of the record id (the first salt that puts 40-60 % of every entity type in test), and writes one
JSON record per line with sorted keys. Standard library only; the output is byte-for-byte
reproducible.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections import Counter
from pathlib import Path

OUT = Path(__file__).parent / "pii.jsonl"

ENTITY_ALIASES = {
    "P": "PERSON", "A": "ADDRESS", "E": "EMAIL", "T": "PHONE", "CC": "CREDIT_CARD",
    "IBAN": "IBAN", "IP": "IP_ADDRESS", "SSN": "US_SSN", "NINO": "UK_NINO",
    "DOB": "DATE_OF_BIRTH", "KEY": "SECRET",
}
NEGATIVE_ALIASES = {
    "PRODUCT": "PRODUCT", "ORG": "ORG", "LOC": "LOCATION", "DATE": "DATE", "ID": "ID",
    "SKU": "SKU", "VER": "VERSION", "PRICE": "PRICE", "TRACK": "TRACKING_NUMBER",
    "WORD": "WORD", "DRUG": "DRUG", "NUM": "NUMBER",
}
MINIMUM = {
    "PERSON": 110, "ADDRESS": 60, "EMAIL": 30, "PHONE": 40, "CREDIT_CARD": 15, "IBAN": 12,
    "IP_ADDRESS": 12, "US_SSN": 10, "UK_NINO": 10, "DATE_OF_BIRTH": 15, "SECRET": 15,
}
MIN_TOTAL_ENTITIES = 400
MIN_NEGATIVES = 120
MIN_TEST_SHARE = 0.40

# (role, text with markup). q = question, d = document, a = answer.
RECORDS: list[tuple[str, str]] = [
    # ---------------------------------------------------------------- questions
    ("q", "Hi, this is [[P|Grace Liu]]. My {{PRODUCT|Galaxy S24}} arrived with a cracked screen, "
          "can you send the replacement to [[A|Flat 3, 12 Elm Road, Leeds LS6 2AB]] instead of my "
          "work address?"),
    ("q", "I changed my number to [[T|+44 7700 900123]] last week but the {{PRODUCT|Authenticator}} "
          "codes still go to the old one. {{WORD|Will}} that fix itself?"),
    ("q", "Can someone call [[P|Will Hunter]] back on [[T|(555) 010-4477]]? He's been waiting since "
          "{{DATE|Monday}} about invoice {{ID|INV-20931}}."),
    ("q", "why was my card ending 4444 charged twice?? the full number is "
          "[[CC|5555 5555 5555 4444]] and I only ordered once ({{ID|order #118204}})"),
    ("q", "Please update the billing address for my account to [[A|Hauptstraße 5, 10115 Berlin]] (it was [[A|Postfach 10 02 31, 80076 München]]). "
          "The invoice should be in the name of [[P|Jonas Becker]]."),
    ("q", "My wife [[P|Hope Sandoval]] and I both have accounts - can we merge them? Hers is "
          "[[E|hope.sandoval@example.com]], mine is [[E|r.sandoval@example.org]]."),
    ("q", "Do you ship to {{LOC|Canada}}? I'm at [[A|455 Rue Sainte-Catherine O, Montréal, QC H3B 1A6]] "
          "and the checkout keeps rejecting the postcode."),
    ("q", "hey its [[P|Chinedu]] again, the refund to [[IBAN|GB?? NWBK 6016 1331 9268 19]] never "
          "arrived. you said 5 working days on the 3rd"),
    ("q", "I'd like to add my son [[P|Arjun Mehta]] (born [[DOB|14 August 2009]]) as a dependant on "
          "the family plan. What documents do you need?"),
    ("q", "Our {{ORG|Salesforce}} sync broke after rotating the key. The old one was "
          "[[KEY|sk-proj-7fQ2nLx9WbT4cV1mRz8KpA3sHd6Yg0Ue]] - is it still cached somewhere on your side?"),
    ("q", "Is there a way to stop {{PRODUCT|Jira}} from emailing [[E|mark.obrien@contoso-logistics.com]]? "
          "[[P|Mark]] left the company in {{DATE|March}}."),
    ("q", "What's the grace period on late payments? I {{WORD|hope}} it's more than a week, my "
          "salary comes in on the {{DATE|28th}}."),
    ("q", "Could you {{WORD|bill}} me annually instead of monthly? Account holder is [[P|Bill Okonkwo]], "
          "same as before."),
    ("q", "I was born [[DOB|4 March 1987]] but the form says I'm under 18, so I can't finish the "
          "{{PRODUCT|Premium Saver}} application."),
    ("q", "Please remove my details. Name: [[P|Agnieszka Wiśniewska]], email [[E|a.wisniewska@example.pl]], "
          "phone [[T|+48 22 555 01 23]]."),
    ("q", "The delivery driver couldn't find [[A|27 Kookaburra Crescent, Bentleigh VIC 3204]]. Tracking "
          "says {{TRACK|1Z999AA10123456784}}. Can you ask them to try again {{DATE|Friday}}?"),
    ("q", "Can I pay the outstanding {{PRICE|€249.00}} by bank transfer from "
          "[[IBAN|DE??370400440532013000]]? It's my husband's account, [[P|Stefan Krüger]]."),
    ("q", "My SSN is [[SSN|142-58-3906]] - do you actually need it for the W-9, or is the EIN enough? My wife [[P|Keisha]]'s is [[SSN|287-65-4321]] if you need both."),
    ("q", "Who is my account manager now that [[P|Siobhán O'Sullivan]] moved to the {{LOC|Dublin}} team?"),
    ("q", "Our server at [[IP|203.0.113.77]] is getting 403s from your API since the {{VER|v2.14}} rollout. "
          "Nothing changed on our side."),
    ("q", "{{WORD|Summer}} sale question: does the {{PRODUCT|iPhone 15 Pro}} discount stack with the student "
          "discount? My daughter [[P|Summer]] is at uni."),
    ("q", "hi! i need to change the name on the booking from [[P|Nguyen Thi Lan]] to [[P|Tran Van Minh]], "
          "same flight {{ID|VN-0417}}."),
    ("q", "Can you confirm you have my correct NI number for the payroll export? It should be "
          "[[NINO|AB 12 34 56 C]]. The old contract had [[NINO|AB123456D]], which was a typo."),
    ("q", "I keep getting 'card declined' with [[CC|4111-1111-1111-1111]]. The bank says nothing is "
          "blocked. Is it your {{ORG|Stripe}} integration?"),
    ("q", "Is the {{DRUG|ibuprofen}} 400 mg on the formulary, or do I need the {{DRUG|Nurofen}} brand "
          "for the claim to go through?"),
    ("q", "Please send the contract to Ms. [[P|Okafor]]'s office at [[A|12 Awolowo Road, Ikoyi, Lagos 101233]], "
          "attention [[P|Ngozi Okafor]]."),
    ("q", "I accidentally pasted our GitHub token in the last chat: [[KEY|ghp_4kT9mQxV2bN7cR1sY8wL3zD6fH0jP5aE2uGi]]. "
          "Can you delete that message?"),
    ("q", "Where is the {{LOC|London}} office? I have an interview with Dr [[P|Nguyen]] on {{DATE|Thursday}}."),
    ("q", "[[P|Frank]] here. Does the {{PRODUCT|ThinkPad X1 Carbon}} warranty cover a swollen battery? "
          "Serial {{ID|PF3KQ9ZL}}."),
    ("q", "Can you resend the verification code? I'm on [[T|+91 98765 43210]] now, not the landline."),
    ("q", "Hi, I'm [[P|Fatima Al-Sayed]]. I moved to [[A|Apt 1204, Marina Heights, Dubai Marina, PO Box 24567, Dubai]] "
          "and need my statements sent there from {{DATE|next month}}."),
    ("q", "How do I change the date of birth on my profile? It says [[DOB|1990-07-12]] but I was born "
          "on [[DOB|1990-12-07]], you swapped day and month."),
    ("q", "Can the {{ORG|Main Street Bank}} card be used at your stores, or only {{ORG|Visa}} and "
          "{{ORG|Mastercard}}?"),
    ("q", "My login from [[IP|2001:db8:85a3::8a2e:370:7334]] was flagged as suspicious. That's my home "
          "connection, please unblock it."),
    ("q", "ok so [[P|Rose]] said to email [[E|support@example.com]] but that bounced - is there another address?"),
    ("q", "Send the engraved watch to my sister [[P|Yuki Tanaka]] (she's married to [[P|Haruto Tanaka]]) at "
          "[[A|1-2-3 Jingumae, Shibuya-ku, Tokyo 150-0001]]. Order {{ID|JP-88213}}."),
    ("q", "I'm locked out. Username [[E|d.kowalczyk@example.net]], old password was [[KEY|Wint3rIsC0ming!]]. "
          "Please don't make me wait until {{DATE|Monday}}."),
    ("q", "Can I use my {{ORG|American Express}} [[CC|3782 822463 10005]] for the deposit, or only the debit card [[CC|4929 4012 7734 118?]]?"),
    ("q", "Please call me on [[T|020 7946 0958]] after 5pm, or my mobile [[T|07700 900461]]. If neither works, my partner [[P|Siddharth]] is on [[T|+447700900512]]."),
    ("q", "Does the {{PRODUCT|Pixel 8}} support eSIM in {{LOC|Japan}}? Travelling in {{DATE|April}}."),

    # ---------------------------------------------------------------- documents: CRM notes, tickets
    ("d", "CRM note ({{DATE|2024-11-03}}): Spoke with [[P|Priya Raghavan]] re: {{ID|ticket #44817}}. "
          "She confirmed the delivery address [[A|Flat 402, Sai Krupa Apartments, 14th Cross, Indiranagar, Bengaluru 560038]] "
          "and mobile [[T|+91 80 5550 1122]]. Escalated to [[P|Kiran Desai]] in billing."),
    ("d", "Ticket {{ID|SUP-3391}} - Customer: [[P|Santiago Ruiz]] <[[E|santiago.ruiz@example.es]]>\n"
          "Issue: double charge on {{PRODUCT|Galaxy Buds2}} order.\nCard: [[CC|4242 4242 4242 4242]] (customer also read out a second card, [[CC|4000 0025 0000 315?]])\n"
          "Phone: [[T|+34 612 555 091]]\nStatus: refunded {{PRICE|€129.99}} on {{DATE|12 Jan}}."),
    ("d", "Call summary: [[P|Will]] from procurement at {{ORG|Harbor Freight Co.}} phoned about the "
          "{{ID|PO-77120}} delay. I told him we {{WORD|will}} ship by {{DATE|the 15th}}. He asked that "
          "invoices go to [[E|ap@harborfreight-example.com]]. Callback on [[T|+1 312 555 0142]]."),
    ("d", "Employee record\nName: [[P|Oluwaseun Adeyemi]]\nDOB: [[DOB|22/09/1985]]\nNI number: [[NINO|JG 10 38 47 A]]\n"
          "Address: [[A|14 Acacia Avenue, Bristol BS6 7QW]]\nStart date: {{DATE|01/04/2019}}\nManager: [[P|Claire Pemberton]]"),
    ("d", "From: [[P|Krzysztof Nowak]] <[[E|k.nowak@nowak-transport.example.pl]]>\nTo: [[E|orders@example.com]]\n"
          "Subject: Re: {{ID|Order 55102}}\n\nHello, please deliver to our new warehouse at "
          "[[A|ul. Marszałkowska 84/92, 00-514 Warszawa]]. Payment will follow from "
          "[[IBAN|PL?? 1090 1014 0000 0712 1981 2874]]. Regards, [[P|Krzysztof]]"),
    ("d", "HR policy 4.2 (Parental leave): Employees with at least 26 weeks of service are entitled to "
          "up to 52 weeks of leave. Requests go to the HR inbox, [[E|hr-leave@example.com]], at least "
          "{{NUM|15}} weeks before the expected week of childbirth. Questions about pay can be directed to "
          "[[P|Margaret Whitlock]] (Payroll) on extension {{NUM|4417}}. This policy applies to all "
          "{{LOC|UK}} sites, including the {{LOC|Manchester}} and {{LOC|Glasgow}} offices. It was last reviewed in "
          "{{DATE|September 2024}} and replaces version {{VER|3.1}}."),
    ("d", "Order record\nOrder: {{ID|#A-993104}}  Placed: {{DATE|2025-02-11}}\nShip to: [[P|Hiroshi Yamamoto]]\n"
          "[[A|3-14-1 Minami-Aoyama, Minato-ku, Tokyo 107-0062]]\nTel: [[T|+81 3-5550-1234]]\n"
          "Items: {{SKU|SKU-BT-4420}} x1 ({{PRICE|¥18,400}})\nCarrier: {{ORG|Yamato}} {{TRACK|4421-8830-1192}}"),
    ("d", "Note from [[P|Dawn Kowalczyk]] (Tier 2): customer insists the charge on [[CC|6011 1111 1111 1117]] "
          "was not authorised. Login history shows access from [[IP|198.51.100.23]] and "
          "[[IP|198.51.100.24]] on {{DATE|Oct 2}}. Both resolve to {{LOC|Ohio}}; customer lives in {{LOC|Texas}}. "
          "Recommend fraud review."),
    ("d", "KB article {{ID|KB-1120}}: How to reset two-factor authentication. Customers who lose their phone "
          "should contact support from the e-mail address on file. Agents must verify identity with two of: "
          "date of birth, last four digits of the card, billing postcode. Never ask for the full card number "
          "or the password. {{WORD|Mark}} the ticket as {{WORD|Sensitive}} before attaching documents."),
    ("d", "Ticket {{ID|#90412}} (priority: high)\nReporter: [[P|Mohammed Al-Rashid]]\nEmail: [[E|m.alrashid@example.ae]]\n"
          "Phone: [[T|+971 4 555 0199]] / [[T|+971 50 555 0142]]\nDescription: API calls from [[IP|192.0.2.14]] fail with 401 since "
          "key rotation. Customer shared the new key in the ticket body: [[KEY|AKIAIOSFODNN7EXAMPLE]] - "
          "agent removed it from the public thread."),
    ("d", "Tenancy application summary. Applicant: [[P|Ana-María López-Ortega]], born [[DOB|3 May 1992]]. "
          "Current address: [[A|Calle Mayor 14, 3º B, 28013 Madrid]]. Previous landlord: [[P|Javier Morales]], "
          "[[T|+34 91 555 23 41]]. Guarantor: [[P|Lucía Ortega]]."),
    ("d", "Customer wrote: \"Hi, my name is [[P|Grace]], I've been a member since {{DATE|2016}}. I was promised "
          "the loyalty rate and got charged {{PRICE|$79}} instead. Please call me at [[T|555-0198]].\" "
          "Agent note: [[P|Grace]] is on the {{PRODUCT|Gold}} tier, refund approved."),
    ("d", "Vendor onboarding form\nCompany: {{ORG|Okonjo & Daughters Ltd}}\nContact: [[P|Adaeze Okonjo]]\n"
          "Registered office: [[A|Unit 7, Riverside Industrial Estate, Dartford DA1 5PZ]]\n"
          "Bank: [[IBAN|GB??BARC20000055779911]]\nEuro account: [[IBAN|NL??ABNA0417164300]]\nVAT: {{ID|GB 123 4567 89}}"),
    ("d", "Incident {{ID|INC-5521}}: a developer committed a config file containing "
          "`DB_PASSWORD=[[KEY|pa55w0rd-Hunter2-prod]]` and `STRIPE_KEY=[[KEY|sk_test_51HqLyjWDarjtT1zdp7dc]]`. "
          "The same file had `SENDGRID_API_KEY=[[KEY|SG.x7Lq9TnR2w.Vb4Kd8Pz1mHc6Yf0Sg3Jt5Ne]]`. All three were rotated within {{NUM|20}} minutes. Reported by [[P|Chen Wei]]."),
    ("d", "From the {{ORG|Contoso}} employee handbook: travel bookings over {{PRICE|£500}} need approval from "
          "your line manager. Use the {{PRODUCT|Concur}} portal; do not email card details. The travel desk "
          "({{LOC|Reading}} office) is staffed {{DATE|Monday}} to {{DATE|Friday}}, 9:00-17:30."),
    ("d", "Account notes - [[P|Summer Nguyen]]: prefers contact by email ([[E|summer.n@example.com]]). "
          "Lives at [[A|1208 W Maple St, Apt 3B, Chicago, IL 60614]]. Do not call before 10am CT. "
          "{{WORD|Summer}} promotion applied on {{DATE|June 3}}."),
    ("d", "Payroll correction request\nEmployee: [[P|Declan O'Brien]]\nNI number: [[NINO|CE 45 67 89 B]]\n"
          "Bank: [[IBAN|IE??AIBK93115212345678]]\nHome: [[A|14 Lower Leeson Street, Dublin 2, D02 X285]]\n"
          "Reason: overtime for {{DATE|October}} missing."),
    ("d", "Chat transcript excerpt:\nUser: my dad [[P|Vikram Singh]] set up the account, his DOB is "
          "[[DOB|11-02-1958]]\nAgent: Thanks. Can you confirm the postcode?\nUser: it's the one in "
          "[[A|B-12, Sector 62, Noida, Uttar Pradesh 201309]]"),
    ("d", "Returns policy: items can be returned within {{NUM|30}} days of delivery. Ship returns to our "
          "warehouse at [[A|PO Box 4471, Austin, TX 78765]]. Include the {{WORD|RMA}} number on the outside of "
          "the parcel. Refunds are issued to the original payment method within 5-7 business days. "
          "{{PRODUCT|Kindle}} devices bought as gifts are refunded as store credit. Large items such as "
          "{{PRODUCT|Bosch}} dishwashers are collected by our courier partner {{ORG|XPO}}; book a slot when you "
          "request the return. Customers in {{LOC|Alaska}} and {{LOC|Hawaii}} should use the prepaid {{ORG|USPS}} "
          "label instead. Opened software, gift cards and perishable goods cannot be returned. If a return is "
          "refused, the returns team lead, [[P|Niamh Doyle]], reviews the case within 3 business days; you can "
          "reach her team at [[E|returns@example.com]] or [[T|+1 512 555 0177]]. Last updated {{DATE|January 2025}}."),
    ("d", "Email pasted into ticket {{ID|#77231}}:\n> Dear Mr. [[P|Dubois]],\n> Following our call, please "
          "find the revised quote attached. The installation at [[A|12 rue de la Paix, 75002 Paris]] is "
          "scheduled for {{DATE|14 mars}}. Deposit to [[IBAN|FR?? 2004 1010 0505 0001 3M02 606]].\n> Best regards,\n> [[P|Élodie Marchand]]\n> [[T|+33 1 55 50 12 34]]"),
    ("d", "Background check result for [[P|Marcus Johnson]]: SSN [[SSN|219-40-9931]] verified (alias SSN [[SSN|219 40 9932]] flagged), "
          "DOB [[DOB|07/19/1979]], current address [[A|88 Harbor Drive, San Diego, CA 92101]]. No records found."),
    ("d", "Field service log: Technician [[P|Joy Adebayo]] visited [[A|Keizersgracht 221, 1016 DV Amsterdam]] "
          "on {{DATE|9 April}}. Replaced the {{PRODUCT|Nest Thermostat}} ({{SKU|T3017US}}). Customer "
          "[[P|Pieter van der Berg]] signed off. Next visit: {{DATE|Q3}}."),
    ("d", "The {{ORG|Acme}} loyalty programme has three tiers: {{PRODUCT|Silver}}, {{PRODUCT|Gold}} and "
          "{{PRODUCT|Platinum}}. Members in {{LOC|Germany}}, {{LOC|France}} and {{LOC|Spain}} earn double points "
          "in {{DATE|December}}. Points expire after 24 months. To transfer points between family members, "
          "both accounts must be verified. Send both account numbers to [[E|loyalty@example.com]] from the e-mail "
          "address on file. Points have no cash value and cannot be sold. The programme is operated by "
          "{{ORG|Acme Rewards GmbH}}, [[A|Friedrichstraße 68, 10117 Berlin]], and complaints that cannot be settled "
          "by the support team go to its data protection officer, Dr. [[P|Ingrid Halvorsen]]. {{PRODUCT|Platinum}} "
          "members also get free delivery on orders over {{PRICE|€50}} and early access to the {{WORD|Black Friday}} sale."),
    ("d", "Incoming wire: {{PRICE|CHF 4,200.00}} from [[IBAN|CH?? 0076 2011 6238 5295 7]], ordering party "
          "[[P|Lukas Meier]], reference {{ID|INV-2025-0311}}. Matched to account of [[P|Sabine Meier]]."),
    ("d", "Server access log excerpt:\n[[IP|10.0.4.12]] - - [{{DATE|12/Mar/2025:10:02:11}}] "
          "\"POST /api/login\" 200\n[[IP|172.16.254.1]] - - [{{DATE|12/Mar/2025:10:02:14}}] "
          "\"GET /api/me?token=[[KEY|eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiI0MiJ9.dBjftJeZ4CVPmB92K27uhbUJU1p1r]]\" 200"),
    ("d", "Delivery exception: parcel for [[P|Liam Murphy]] could not be delivered to "
          "[[A|Apt 5, The Maltings, Bray Road, Cork T12 YX80]]. Left card. Redelivery booked for "
          "{{DATE|Saturday}}. Tracking {{TRACK|RR123456785IE}}."),
    ("d", "Account holder: [[P|Xu Mingyue]] ([[P|Mia]])\nEmail: [[E|mia.xu@example.cn]]\nPhone: "
          "[[T|+86 10 5555 8866]]\nShipping: [[A|Room 1803, Tower B, 88 Jianguo Road, Chaoyang District, Beijing 100022]]\n"
          "Plan: {{PRODUCT|Business Pro}} ({{PRICE|¥980/month}})"),
    ("d", "Meeting notes {{DATE|2025-01-20}}: attendees [[P|Hannah Schmidt]], [[P|Tomasz Zieliński]], "
          "[[P|Aisha Bello]]. Agreed to migrate the {{LOC|EU}} tenants to {{PRODUCT|Postgres 16}} before "
          "{{DATE|end of Q1}}. [[P|Tomasz]] owns the runbook; [[P|Aisha]] to check the {{ORG|AWS}} quota."),
    ("d", "Credit application\nApplicant: [[P|Darnell Washington]]\nSSN: [[SSN|078-51-2203]]\nDate of birth: "
          "[[DOB|June 2, 1983]]\nEmployer: {{ORG|Lone Star Logistics}}\nAnnual income: {{PRICE|$64,000}}\n"
          "Residence: [[A|2217 Elm Street, Dallas, TX 75201]]"),
    ("d", "Knowledge base: Changing a delivery address. Once an order ships, the address can only be changed "
          "through the carrier. For {{ORG|DHL}} shipments use the {{PRODUCT|On Demand Delivery}} link; for "
          "{{ORG|Royal Mail}} use the {{PRODUCT|Redeliver}} service. Orders to {{LOC|Northern Ireland}} and "
          "the {{LOC|Channel Islands}} may take an extra two days. Before the order ships, agents may change the "
          "address in {{PRODUCT|Order Desk}} once the customer has passed verification. Never change an address "
          "because of an e-mail alone: fraudsters often ask to redirect high-value parcels such as "
          "{{PRODUCT|MacBook Air}} or {{PRODUCT|PlayStation 5}} orders. If the new address is in another country, "
          "cancel and re-place the order so that duties are recalculated. Escalations go to the logistics desk "
          "({{LOC|Swindon}}), which is open {{DATE|Monday}} to {{DATE|Saturday}}."),
    ("d", "Subject: Your {{ORG|Acme}} invoice\nHi [[P|Penny]],\nYour invoice {{ID|INV-44102}} for {{PRICE|£36.00}} "
          "is attached. We charged the card ending in 1881 ([[CC|4012 8888 8888 1881]]). If you have any "
          "questions, reply to this email or call [[T|0161 496 0732]].\nThanks, [[P|Rob Ellis]]"),
    ("d", "Patient intake (clinic portal)\nName: [[P|Kwame Mensah]]\nDOB: [[DOB|1976-11-30]]\nPhone: "
          "[[T|+233 30 255 0147]]\nAddress: [[A|PO Box 812, Fortitude Valley QLD 4006]]\nCurrent medication: "
          "{{DRUG|metformin}} 500 mg, {{DRUG|Lipitor}} 20 mg\nGP: Dr [[P|Rebecca Lau]]"),
    ("d", "Slack export (#ops): [[P|Chase Turner]]: who rotated the bot token? the old one "
          "[[KEY|xoxb-2048-1024-Hx9TqLmW3nRv8KpZ2cYd]] still works\n[[P|Miles Brown]]: me, I'll revoke it now"),
    ("d", "Lease summary: Tenant [[P|Daisy King]], unit [[A|Level 12, 100 Market Street, Sydney NSW 2000]]. "
          "Bond paid from [[IBAN|AT??1904300234573201]] (overseas account). Rent {{PRICE|A$3,450}} per month, "
          "due on the 1st."),
    ("d", "Contractor details\nName: [[P|Rajesh Kumar Iyer]]\nPAN: on file\nBank: HDFC, account ending 4471\n"
          "Address: [[A|House No. 7, Lane 3, Banjara Hills, Hyderabad 500034]]\nMobile: [[T|+91-99000-12345]]\n"
          "Email: [[E|rajesh.iyer@example.in]]"),
    ("d", "Order {{ID|#100442}}: 2 x {{PRODUCT|AirPods Pro}} ({{SKU|MTJV3}}), {{PRICE|$498.00}}. Placed "
          "{{DATE|March 3, 2025}}. Ship to [[P|Amber Li]], [[A|350 Fifth Avenue, Suite 4100, New York, NY 10118]]. "
          "Billing phone [[T|212-555-0176]]."),
    ("d", "Visitor sign-in sheet {{DATE|17/02}}: [[P|Iris Novak]] ({{ORG|Deloitte}}), [[P|Sunny Dhillon]] "
          "({{ORG|KPMG}}), [[P|Art Young]] (courier). Badges returned."),
    ("d", "From: [[E|noreply@example.com]]\nTo: [[E|hunter.will@example.org]]\nSubject: Password reset\n\n"
          "Hi [[P|Will]], use this one-time code to reset your password: [[KEY|739201-QX]]. It expires in "
          "{{NUM|15}} minutes. If you didn't ask for this, ignore this message."),
    ("d", "Insurance claim {{ID|CLM-22-08812}}: Claimant [[P|Ruby Hart]], policy {{ID|HH-4410293}}. Property "
          "at [[A|9 Ferry Lane, Ventnor, Isle of Wight PO38 1AB]] damaged by storm on {{DATE|2 November}}. "
          "Adjuster: [[P|Cliff Stone]], [[T|01983 555 214]]."),
    ("d", "Release notes {{VER|4.8.0}}: {{PRODUCT|Outlook}} add-in now supports shared mailboxes; "
          "{{PRODUCT|Teams}} notifications are batched; fixed a crash on {{PRODUCT|Windows 11}} {{VER|23H2}}. "
          "Thanks to {{ORG|Fabrikam}} for the bug report."),
    ("d", "Direct debit mandate\nDebtor: [[P|Matteo Rossi]]\nIBAN: [[IBAN|IT??X0542811101000000123456]]\n"
          "Address: [[A|Via Roma 22, 20121 Milano]]\nCreditor ID: {{ID|IT98ZZZ0000012345678}}"),
    ("d", "Subscriber list export (partial)\n[[E|j.park@example.kr]], [[P|June Park]], [[T|+82 2 555 0193]]\n"
          "[[E|april.santos@example.ph]], [[P|April Santos]], [[T|+63 2 8555 0144]]\n"
          "[[E|may.lin@example.sg]], [[P|May Lin]], [[T|+65 6555 0131]]"),
    ("d", "Offboarding checklist for [[P|Sandy Morales]]: revoke {{PRODUCT|Okta}} access, collect laptop "
          "({{ID|asset 00419}}), forward mail to [[E|team-lead@example.com]], final pay to the account on "
          "file. Last day: {{DATE|Friday 28 March}}."),
    ("d", "Complaint letter (scanned):\n\"I, [[P|Bogdan Kowalski]], of [[A|ul. Długa 12/4, 80-831 Gdańsk]], "
          "wish to complain about the treatment I received from your agent [[P|Pat]] on the telephone. I was "
          "told to call [[T|+48 58 555 0110]] and nobody answered.\""),
    ("d", "Mortgage file\nBorrowers: [[P|Thomas Ashworth-Price]] and [[P|Olivia Ashworth-Price]]\n"
          "Property: [[A|Rose Cottage, 3 Church Lane, Little Snoring, Norfolk NR21 0AB]]\nLoan: {{PRICE|£285,000}}\n"
          "Solicitor: [[P|Harriet Fenwick-Clarke]]"),
    ("d", "Ticket {{ID|#30018}}: user reports {{PRODUCT|VPN}} drops every 20 minutes. Client IP "
          "[[IP|203.0.113.201]], gateway [[IP|2001:db8::1]]. Using {{PRODUCT|FortiClient}} {{VER|7.2.3}} on "
          "{{PRODUCT|macOS Sonoma}}."),
    ("d", "Tax form W-4 summary: [[P|Jennifer Alvarez]], SSN [[SSN|512-44-3098]], filing status married, spouse [[P|Daniel Alvarez]] (SSN [[SSN|512-44-3177]]), "
          "address [[A|4100 Sunset Blvd, Los Angeles, CA 90029]]."),
    ("d", "Onboarding email pasted in ticket:\n\"Welcome aboard, [[P|Faith]]! Your laptop will be sent to "
          "[[A|1200 Bay Street, Unit 1504, Toronto, ON M5R 2A5]]. Your temporary password is "
          "[[KEY|Welcome2025!Tor]] - change it at first login. Your buddy is [[P|Gene Park]].\""),
    ("d", "Catering order for the {{LOC|Berlin}} offsite: 40 x lunch boxes ({{SKU|LB-VEG-12}}), delivery "
          "to the venue on {{DATE|Tuesday}} by 11:30. Contact on the day: [[P|Lena Vogel]], [[T|+49 30 901820]]."),
    ("d", "KYC record\nCustomer: [[P|Emeka Nwosu]]\nDOB: [[DOB|1988-01-25]]\nID: passport {{ID|A09887712}} (expired)\n"
          "Proof of address: utility bill for [[A|Plot 5, Admiralty Way, Lekki Phase 1, Lagos 106104]]\n"
          "Risk: low"),
    ("d", "Card dispute {{ID|DSP-5510}}: cardholder [[P|Beatriz Costa]] disputes {{PRICE|€59.90}} on "
          "[[CC|5105 1051 0510 5100]] (a previous dispute in 2023 was on [[CC|5425-2334-3010-910?]]). Merchant {{ORG|Lisbon Coffee Roasters}}. Refund account "
          "[[IBAN|PT??000201231234567890154]]."),
    ("d", "Mailing list bounce report: [[E|old.address@example.co.uk]] (mailbox full), "
          "[[E|grace.okoro@example.com.ng]] (unknown user), [[E|bill@example.net]] (blocked)."),
    ("d", "Note: the {{ORG|Grace Hopper}} conference booth needs two staff on {{DATE|October 9}}. "
          "Ask [[P|Autumn Reyes]] if she can cover the morning."),
    ("d", "Delivery instructions on order {{ID|#55831}}: \"Leave with neighbour at no. 14 if out. Address: "
          "[[A|Lindenallee 23a, 50968 Köln]]. Ring [[P|Müller]].\" Recipient: [[P|Jürgen Müller]]."),
    ("d", "Bank details update (verified by call-back on {{DATE|3 Feb}}): supplier [[P|Sofia Andersson]], "
          "new account [[IBAN|SE?? 5000 0000 0583 9825 7466]]. Old account closed."),
    ("d", "HR note: [[P|Mei Ling Tan]] requested a change of address to [[A|10 Anson Road, #21-07, Singapore 079903]] "
          "and a new emergency contact, [[P|Hock Seng Tan]] on [[T|+65 9123 4567]]."),
    ("d", "Pharmacy order {{ID|RX-44120}}: {{DRUG|amoxicillin}} 500 mg x 21, {{DRUG|paracetamol}} 500 mg x 32. "
          "Deliver to [[A|8 avenue Jean Médecin, 06000 Nice]] for [[P|Camille Laurent]] (DOB [[DOB|09.06.1971]])."),
    ("d", "Access review: service account {{WORD|deploy-bot}} still uses the shared password "
          "[[KEY|Zq8!vR2#mLp5]]. Owner [[P|Hunter Blake]] to rotate by {{DATE|Friday}}."),
    ("d", "Shipping label (OCR): FROM {{ORG|Acme Fulfilment}}, {{LOC|Swindon}} TO [[P|Maeve O'Connell]] "
          "[[A|Ballymore, Kilcullen, Co. Kildare R56 F2K8]] WEIGHT 2.1 kg REF {{ID|AF-99120}}"),
    ("d", "Legal hold notice: custodians [[P|Abdullah Rahman]], [[P|Layla Haddad]] and [[P|Yusuf Demir]] must "
          "preserve all email relating to {{ORG|Project Falcon}} from {{DATE|January 2023}} onward."),
    ("d", "Customer record\nName: Mr. [[P|Bill Hope]]\nEmail: [[E|billhope@example.com]]\nCard: [[CC|3530 1113 3330 0000]]\nBackup card: [[CC|6011-0009-9013-9424]]\nPhone: [[T|0161 496 0001]]\n"
          "Billing: [[A|PO Box 1234, Manchester M60 2AB]]"),
    ("d", "Apartment viewing: [[P|Carol Whitfield]] booked a viewing of [[A|Flat 9, 41 Princes Street, Edinburgh EH2 2BY]] "
          "on {{DATE|Saturday}} at 11. Mobile [[T|07700 900782]]. She works for {{ORG|NHS Lothian}}."),
    ("d", "Conference badge list: Dr. [[P|Oluwaseyi Bankole]] ({{ORG|University of Ibadan}}), Prof. [[P|Li Na]] "
          "({{ORG|Tsinghua}}), [[P|Sean Ó Briain]] ({{ORG|TCD}}). Dietary: vegetarian x2."
          
          ),
    ("d", "UK payroll import flagged 3 rows: row 14 [[P|Gareth Evans]] NINO [[NINO|NA 23 19 84 D]] (ok), "
          "row 15 [[P|Rhian Price]] NINO [[NINO|HT 90 11 22 A]] (tax code missing), row 16 [[P|Megan Lloyd]] NINO [[NINO|WL 55 20 13 D]] (duplicate)."),
    ("d", "Our {{LOC|Paris}} office at {{LOC|La Défense}} handles all {{LOC|France}} and {{LOC|Benelux}} accounts. "
          "For invoices, use the billing entity {{ORG|Acme SAS}}, {{ID|SIREN 552 100 554}}. The office closes on "
          "{{DATE|14 July}} and {{DATE|15 August}}."),
    ("d", "Wire instructions from the customer (verified by phone at 11:02): beneficiary [[P|Pham Quoc Bao]], "
          "account [[IBAN|BE??539007547034]], bank address irrelevant. Amount {{PRICE|€1,150}}."),
    ("d", "Repair ticket: {{PRODUCT|Dyson V15}} ({{ID|serial SV22-UK-449102}}) collected from "
          "[[A|33 Canal Street, Nottingham NG1 7EH]]. Customer [[P|Dev Patel]] wants a callback on "
          "[[T|0115 496 0881]] before {{DATE|Wednesday}}."),
    ("d", "Audit: API key [[KEY|AKIAJ7Q2LX4EXAMPLE99]] (owner [[P|Rich Patel]]) last used from [[IP|198.51.100.77]] and [[IP|2001:db8:4f::c0a8:1]] "
          "on {{DATE|2025-03-09}}; key age 412 days, exceeds the 90-day policy."),
    ("d", "Guest list for the {{ORG|Hilton}} {{LOC|Dubai}} event: [[P|Mariam Khalil]], [[P|Tariq Aziz Farouk]], "
          "[[P|Noura Al-Mansouri]]. Contact for changes: [[E|events@example.ae]]."),
    ("d", "Reservation {{ID|HX-30199}}: [[P|Katarzyna Lewandowska]] + 1, check-in {{DATE|21 June}}, "
          "3 nights, {{PRICE|PLN 1,740}}. Guest phone [[T|+48 601 555 017]]. Card guarantee "
          "[[CC|4000056655665556]], replaced by [[CC|5200828282828210]] on arrival."),
    ("d", "Student record\nName: [[P|Nguyen Van An]]\nDate of birth: [[DOB|15/03/2004]]\nHome address: "
          "[[A|45 Le Loi Street, District 1, Ho Chi Minh City 700000]]\nEmergency contact: [[P|Nguyen Thi Hoa]] "
          "[[T|+84 28 3555 0142]]"),
    ("d", "Escalation email pasted by agent:\n\"Ms. [[P|Adeleke]], we have reviewed your complaint about the "
          "{{PRODUCT|Galaxy Tab S9}}. A courier will collect it from [[A|21 Adeola Odeku Street, Victoria Island, Lagos 101241]]. "
          "Regards, [[P|Oliver Grant]], Customer Relations\""),
    ("d", "Git history scan found: `GITHUB_TOKEN=[[KEY|ghp_R2d8Kq7LmX0vT4nB9cW1yZ5sJ3hF6gA8pE2u]]` and `aws_secret_access_key = [[KEY|wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY]]` in "
          "{{ID|commit 4f2a9c1}} by [[P|Taylor Brooks]]; the repo is private but both keys were rotated anyway."),
    ("d", "Letter of offer: Dear [[P|Malik]], we are pleased to offer you the role of {{WORD|Support Engineer}} at "
          "our {{LOC|Leeds}} office, starting {{DATE|1 September 2025}}, salary {{PRICE|£38,500}}. Please sign "
          "and return to [[P|Victoria Hughes]], [[A|2 Wellington Place, Leeds LS1 4AP]]."),
    ("d", "Customer address book (export)\n1. [[P|Sarah Connolly]] - [[A|742 Evergreen Terrace, Springfield, OR 97403]]\n"
          "2. [[P|Miguel Ángel Torres]] - [[A|Av. Insurgentes Sur 1602, Col. Crédito Constructor, 03940 Ciudad de México]]\n"
          "3. [[P|Zanele Dlamini]] - [[A|15 Long Street, Cape Town 8001]]"),
    ("d", "Security advisory {{ID|SA-2025-004}}: versions {{VER|2.3.0}} to {{VER|2.3.4}} of the "
          "{{PRODUCT|Acme Agent}} logged request headers, including bearer tokens, at {{WORD|DEBUG}} level. "
          "Upgrade to {{VER|2.3.5}}. No customer action is needed if logging was at {{WORD|INFO}}. Customers who "
          "ran at {{WORD|DEBUG}} should rotate every token the agent used and delete logs written between "
          "{{DATE|4 February}} and {{DATE|19 March 2025}}. Self-hosted installations on {{PRODUCT|Kubernetes}} can "
          "upgrade with the {{PRODUCT|Helm}} chart {{VER|1.9.2}}; {{PRODUCT|Docker}} users should pull the new image. "
          "The issue was reported responsibly by [[P|Paulina Jankowska]] of {{ORG|Northwind Security}}, "
          "whom we thank. Questions: [[E|security-advisories@example.com]]."),
    ("d", "ID verification failed for [[P|Hamza Qureshi]]: SSN [[SSN|401-22-7719]] does not match DOB "
          "[[DOB|Dec 5, 1991]] on file. Applicant lives at [[A|PO Box 2209, Dearborn, MI 48123]]. The SSN on the paper form reads [[SSN|401227791]] - likely a transposition."),
    ("d", "Benefits enrolment: [[P|Lily Chen-Watanabe]] adds spouse [[P|Kenji Watanabe]] (born "
          "[[DOB|1984-10-02]]) and daughter [[P|Hana]] to the dental plan from {{DATE|1 January}}."),
    ("d", "Phone list for the {{ORG|Acme}} {{LOC|Cork}} site: reception [[T|+353 21 555 0100]], facilities "
          "([[P|Eoin Byrne]]) [[T|+353 87 555 0123]], security desk [[T|00353 21 555 0199]]."),
    ("d", "Customer feedback: \"[[P|Hope]] on the phone was brilliant, she sorted my refund in minutes. "
          "Shame the {{PRODUCT|Acme app}} crashed three times before I got through.\""),
    ("d", "Fraud alert: cards [[CC|4917 6100 0000 0000]] and [[CC|2223 0031 2200 3222]] (and an hour later [[CC|3714 496353 98431]]) used from "
          "[[IP|192.0.2.201]] within 2 minutes for {{PRICE|$1,999}} gift card purchases. Blocked."),

    ("d", "Benefits eligibility batch (run {{DATE|2025-04-01}}), US employees with missing dependants data:\n"
          "- [[P|Carlos Mendoza]], SSN [[SSN|345-12-6780]], DOB [[DOB|1981-05-17]], [[A|1550 N Lamar Blvd, Apt 210, Austin, TX 78701]]\n"
          "- [[P|Tanisha Brooks]], SSN [[SSN|602-38-1147]], [[A|77 Peachtree Pl NE, Atlanta, GA 30309]], [[T|404-555-0163]]\n"
          "- [[P|Wang Fang]], SSN [[SSN|455-71-2093]], [[A|PO Box 3310, Seattle, WA 98114]], [[T|(206) 555-0119]]\n"
          "HR contact for questions: [[P|Brenda Cole]], [[E|benefits@example.com]]."),
    ("d", "UK starter forms received this week ({{ORG|Acme Retail Ltd}}):\n"
          "[[P|Aoife Gallagher]] - NINO [[NINO|JT 47 28 91 B]], [[A|27 Kelvin Drive, Glasgow G20 8QG]], [[T|+44 141 496 0543]]\n"
          "[[P|Kofi Asante]] - NINO [[NINO|PC 38 20 57 A]], [[A|5 Marlowe Court, Cardiff CF10 2HT]], [[T|029 2018 0345]]\n"
          "[[P|Will Summers]] - NINO [[NINO|SH 92 66 14 C]], [[A|Flat 12, 8 Victoria Road, Brighton BN1 3FS]], "
          "[[T|0044 7700 900334]], GitLab access token [[KEY|glpat-9xQvR2mT7kLw4ZbN8cYp]]\n"
          "Missing: P45 for [[P|Kofi]]; bank details for [[P|Will]]."),
    # ---------------------------------------------------------------- answers
    ("a", "Thanks, [[P|Grace]]. I've updated the delivery address to [[A|Flat 3, 12 Elm Road, Leeds LS6 2AB]]; "
          "the replacement {{PRODUCT|Galaxy S24}} will ship {{DATE|tomorrow}}."),
    ("a", "I've asked [[P|Kiran Desai]] in billing to look at the duplicate charge. You'll hear back at "
          "[[E|priya.r@example.in]] within two working days."),
    ("a", "According to the ticket, [[P|Santiago]]'s refund of {{PRICE|€129.99}} was issued on {{DATE|12 Jan}} "
          "to the card ending 4242. Bank processing can take up to 10 days."),
    ("a", "The HR policy says leave requests go to [[E|hr-leave@example.com]] at least 15 weeks before the "
          "expected week of childbirth. For pay questions, [[P|Margaret Whitlock]] in Payroll can help."),
    ("a", "Yes - we ship to {{LOC|Canada}}. The checkout expects a space in the middle of the "
          "postcode, so enter it exactly as in [[A|455 Rue Sainte-Catherine O, Montréal, QC H3B 1A6]]."),
    ("a", "I {{WORD|will}} check with the warehouse. The order for [[P|Hiroshi Yamamoto]] left {{LOC|Osaka}} "
          "on {{DATE|11 February}} with {{ORG|Yamato}}, tracking {{TRACK|4421-8830-1192}}."),
    ("a", "For security I can't display the full card number, but the charge on the card ending 1117 came "
          "from [[IP|198.51.100.23]]. [[P|Dawn]] has already opened a fraud review."),
    ("a", "Sure, [[P|Bill]]. I've switched you to annual billing at {{PRICE|$199/year}}; we'll {{WORD|bill}} "
          "the card on file on {{DATE|1 May}}."),
    ("a", "I've removed the message containing the token. Please still revoke it in {{ORG|GitHub}} under "
          "{{WORD|Settings}} > {{WORD|Developer settings}} - anyone who saw the chat could have copied it."),
    ("a", "Your account manager is now [[P|Conor Fitzgerald]]; [[P|Siobhán]] handed over all {{LOC|UK}} "
          "accounts before moving to {{LOC|Dublin}}. You can reach [[P|Conor]] at [[E|c.fitzgerald@example.ie]]."),
    ("a", "The {{PRODUCT|iPhone 15 Pro}} discount doesn't stack with the student offer, but [[P|Summer]] can "
          "use whichever is larger. The {{WORD|summer}} sale ends {{DATE|31 August}}."),
    ("a", "Done - the booking {{ID|VN-0417}} is now in the name of [[P|Tran Van Minh]]. [[P|Nguyen Thi Lan]] "
          "will receive a cancellation email for her seat."),
    ("a", "The payroll export has your NI number as [[NINO|AB 12 34 56 C]], which matches what you gave."),
    ("a", "Based on the CRM note, the parcel was delivered to [[A|Flat 402, Sai Krupa Apartments, 14th Cross, Indiranagar, Bengaluru 560038]] "
          "and signed for by [[P|Priya]]. I'm sorry it's missing; I've raised {{ID|ticket #44990}}."),
    ("a", "Mr. [[P|Nowak]], the warehouse address is updated to [[A|ul. Marszałkowska 84/92, 00-514 Warszawa]]. "
          "We'll expect the transfer from [[IBAN|PL?? 1090 1014 0000 0712 1981 2874]]."),
    ("a", "I can't change the date of birth in chat. Please upload a photo ID; once verified, we'll correct "
          "it from [[DOB|1990-07-12]] to [[DOB|1990-12-07]]."),
    ("a", "{{DRUG|Ibuprofen}} 400 mg is on the formulary as a generic, so you don't need the {{DRUG|Nurofen}} "
          "brand. The claim limit is {{PRICE|£20}} per month."),
    ("a", "Your new verification code has been sent to [[T|+91 98765 43210]]. It will arrive within a minute; "
          "if not, tap \"{{WORD|Resend}}\"."),
    ("a", "The contract was couriered to [[P|Ngozi Okafor]] at [[A|12 Awolowo Road, Ikoyi, Lagos 101233]] "
          "on {{DATE|Tuesday}} ({{ORG|DHL}} {{TRACK|JD014600006281234567}})."),
    ("a", "I'm sorry, [[P|Fatima]]. Statements will go to [[A|Apt 1204, Marina Heights, Dubai Marina, PO Box 24567, Dubai]] "
          "from {{DATE|next month}}. Paper statements cost {{PRICE|AED 10}} each."),
    ("a", "The tenant listed for that unit is [[P|Daisy King]]. Rent is due on the 1st, and the bond was paid "
          "from an overseas account, so any refund goes back there."),
    ("a", "Your {{ORG|American Express}} card is accepted for the deposit. I've placed a hold of "
          "{{PRICE|$500}} - it drops off within 7 days of checkout."),
    ("a", "I'll call [[P|Will Hunter]] back on [[T|(555) 010-4477]] this afternoon about invoice "
          "{{ID|INV-20931}}. {{WORD|Will}} 3pm work, or would you prefer the morning?"),
    ("a", "The applicant's previous landlord, [[P|Javier Morales]], confirmed the tenancy by phone. "
          "[[P|Ana-María]] can move in on {{DATE|1 June}}."),
    ("a", "The login from [[IP|2001:db8:85a3::8a2e:370:7334]] is unblocked. If you see another alert, "
          "reply here or email [[E|security@example.com]]."),
    ("a", "Yes, Mr. [[P|Dubois]]: the installation at [[A|12 rue de la Paix, 75002 Paris]] is confirmed "
          "for {{DATE|14 March}}. [[P|Élodie]] will be there at 9:00."),
    ("a", "The {{PRODUCT|Pixel 8}} supports eSIM in {{LOC|Japan}} with {{ORG|Docomo}}, {{ORG|au}} and "
          "{{ORG|SoftBank}}. You can add it under {{WORD|Settings}} before you travel in {{DATE|April}}."),
    ("a", "Per the record, [[P|Oluwaseun Adeyemi]] started on {{DATE|1 April 2019}} and reports to "
          "[[P|Claire Pemberton]]. I can't share the home address or NI number here."),
    ("a", "The refund to [[IBAN|GB?? NWBK 6016 1331 9268 19]] was sent on {{DATE|the 3rd}}; the bank "
          "reference is {{ID|RF-88102}}. Sorry for the wait, [[P|Chinedu]]."),
    ("a", "I've sent the tracking number to [[E|april.santos@example.ph]]. [[P|April]], your order should "
          "arrive in {{LOC|Manila}} by {{DATE|April 22}}."),
    ("a", "The {{PRODUCT|ThinkPad X1 Carbon}} warranty covers battery swelling for 3 years. [[P|Frank]], I've "
          "booked a courier to [[A|33 Canal Street, Nottingham NG1 7EH]] for {{DATE|Thursday}}."),
    ("a", "Your account was locked after five failed attempts. I've reset it; a link is on its way to "
          "[[E|d.kowalczyk@example.net]]. Please choose a new password, not the old one."),
    ("a", "Hi [[P|Mia]] - your plan is {{PRODUCT|Business Pro}} at {{PRICE|¥980/month}}, billed to the card "
          "on file. Deliveries go to [[A|Room 1803, Tower B, 88 Jianguo Road, Chaoyang District, Beijing 100022]]."),
    ("a", "The claim for [[P|Ruby Hart]] is with [[P|Cliff]], our adjuster. He'll visit "
          "[[A|9 Ferry Lane, Ventnor, Isle of Wight PO38 1AB]] within 5 working days."),
    ("a", "To reset two-factor authentication, email us from the address on file. We'll verify you with two "
          "of: date of birth, last four card digits, billing postcode. We never ask for a password."),
    ("a", "I can see two cards flagged: one {{ORG|Visa}} and one {{ORG|Mastercard}}, both used from "
          "[[IP|192.0.2.201]]. They're blocked; new cards will reach [[A|2217 Elm Street, Dallas, TX 75201]] "
          "in 5-7 days, Mr. [[P|Washington]]."),
    ("a", "{{LOC|Main Street}} branch hours are 9-5 on weekdays. For {{ORG|Main Street Bank}} cards, use the "
          "{{WORD|Pay by Bank}} option at checkout."),
]


def iban_check(iban_no_spaces: str) -> str:
    """The two check digits for an IBAN whose check digits are '??'."""
    s = iban_no_spaces[4:] + iban_no_spaces[:2] + "00"
    n = int("".join(str(int(c, 36)) for c in s))
    return f"{98 - n % 97:02d}"


def iban_valid(iban: str) -> bool:
    s = iban.replace(" ", "")
    s = s[4:] + s[:4]
    return int("".join(str(int(c, 36)) for c in s)) % 97 == 1


def luhn_digit(digits: str) -> str:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch)
        if i % 2 == 0:  # these get doubled once the check digit is appended
            d *= 2
            if d > 9:
                d -= 9
        total += d
    return str((10 - total % 10) % 10)


def luhn_valid(number: str) -> bool:
    digits = re.sub(r"[ -]", "", number)
    return digits.isdigit() and luhn_digit(digits[:-1]) == digits[-1]


def ssn_valid(ssn: str) -> bool:
    m = re.fullmatch(r"(\d{3})[- ]?(\d{2})[- ]?(\d{4})", ssn)
    if not m:
        return False
    area, group, serial = m.groups()
    return area not in ("000", "666") and not area.startswith("9") and group != "00" and serial != "0000"


def nino_valid(nino: str) -> bool:
    s = nino.replace(" ", "")
    m = re.fullmatch(r"([A-Z])([A-Z])\d{6}([A-D])", s)
    if not m:
        return False
    a, b, _ = m.groups()
    if a in "DFIQUV" or b in "DFIOQUV" or a + b in ("BG", "GB", "KN", "NK", "NT", "TN", "ZZ"):
        return False
    return True


def expand(kind: str, value: str) -> str:
    if kind == "IBAN" and "??" in value:
        compact = value.replace(" ", "")
        return value.replace("??", iban_check(compact), 1)
    if kind == "CREDIT_CARD" and value.endswith("?"):
        digits = re.sub(r"[ -]", "", value[:-1])
        return value[:-1] + luhn_digit(digits)
    return value


MARKUP = re.compile(r"\[\[([A-Z_]+)\|(.*?)\]\]|\{\{([A-Z_]+)\|(.*?)\}\}", re.S)
ROLES = {"q": "question", "d": "document", "a": "answer"}


def parse(markup: str) -> tuple[str, list[dict], list[dict]]:
    out: list[str] = []
    pos = 0
    length = 0
    entities: list[dict] = []
    negatives: list[dict] = []
    for m in MARKUP.finditer(markup):
        plain = markup[pos:m.start()]
        out.append(plain)
        length += len(plain)
        if m.group(1):
            kind = ENTITY_ALIASES[m.group(1)]
            value = expand(kind, m.group(2))
            entities.append({"type": kind, "start": length, "end": length + len(value), "text": value})
        else:
            kind = NEGATIVE_ALIASES[m.group(3)]
            value = m.group(4)
            negatives.append({"kind": kind, "start": length, "end": length + len(value), "text": value})
        out.append(value)
        length += len(value)
        pos = m.end()
    out.append(markup[pos:])
    text = "".join(out)
    assert "[[" not in text and "]]" not in text and "{{" not in text and "}}" not in text, text
    return text, entities, negatives


def check(rid: str, text: str, entities: list[dict], negatives: list[dict]) -> None:
    spans = sorted([(e["start"], e["end"]) for e in entities + negatives])
    for (s1, e1), (s2, _) in zip(spans, spans[1:]):
        assert e1 <= s2, f"{rid}: overlapping spans at {s1}-{e1} / {s2}"
    for item in entities + negatives:
        assert text[item["start"]:item["end"]] == item["text"], (rid, item)
        assert item["text"] == item["text"].strip() and item["text"], (rid, item)
    for e in entities:
        v = e["text"]
        if e["type"] == "CREDIT_CARD":
            assert luhn_valid(v), f"{rid}: card fails Luhn: {v}"
        elif e["type"] == "IBAN":
            assert iban_valid(v), f"{rid}: IBAN fails mod-97: {v}"
        elif e["type"] == "US_SSN":
            assert ssn_valid(v), f"{rid}: bad SSN {v}"
        elif e["type"] == "UK_NINO":
            assert nino_valid(v), f"{rid}: bad NINO {v}"
        elif e["type"] == "EMAIL":
            assert re.fullmatch(r"[\w.+-]+@[\w-]+(\.[\w-]+)+", v), f"{rid}: bad email {v}"
        elif e["type"] == "PERSON":
            assert not re.match(r"(Mr|Mrs|Ms|Miss|Dr|Prof)\b", v), f"{rid}: title inside PERSON {v}"
    # every occurrence of a labelled value is labelled (case-sensitive, whole words)
    covered = [(x["start"], x["end"]) for x in entities + negatives]
    for e in entities:
        for m in re.finditer(r"(?<!\w)" + re.escape(e["text"]) + r"(?!\w)", text):
            assert any(s <= m.start() and m.end() <= t for s, t in covered), \
                f"{rid}: unlabelled occurrence of {e['text']!r} at {m.start()}"


def split_of(rid: str, salt: int) -> str:
    h = hashlib.sha256(f"{salt}:{rid}".encode()).digest()
    return "test" if h[0] % 2 else "dev"


def main() -> int:
    rows = []
    for i, (role, markup) in enumerate(RECORDS, 1):
        rid = f"pii-{i:03d}"
        text, entities, negatives = parse(markup)
        check(rid, text, entities, negatives)
        rows.append({"id": rid, "role": ROLES[role], "text": text,
                     "entities": entities, "negatives": negatives})

    totals = Counter(e["type"] for r in rows for e in r["entities"])
    neg_total = sum(len(r["negatives"]) for r in rows)
    neg_kinds = Counter(n["kind"] for r in rows for n in r["negatives"])
    problems = [f"{t}: {totals[t]} < {n}" for t, n in MINIMUM.items() if totals[t] < n]
    if sum(totals.values()) < MIN_TOTAL_ENTITIES:
        problems.append(f"entities: {sum(totals.values())} < {MIN_TOTAL_ENTITIES}")
    if neg_total < MIN_NEGATIVES:
        problems.append(f"negatives: {neg_total} < {MIN_NEGATIVES}")

    # the first salt whose hash split puts 40-60 % of every type's entities (and of the records,
    # and of the negatives) in test, 30-70 % of each negative kind with 20 or more, and every negative kind in
    # both splits; deterministic
    for salt in range(10_000):
        test = {r["id"] for r in rows if split_of(r["id"], salt) == "test"}
        per = Counter(e["type"] for r in rows if r["id"] in test for e in r["entities"])
        neg_test = sum(len(r["negatives"]) for r in rows if r["id"] in test)
        shares = [per[t] / totals[t] for t in totals] + [len(test) / len(rows), neg_test / neg_total]
        nper = Counter(n["kind"] for r in rows if r["id"] in test for n in r["negatives"])
        loose = [nper[k] / n for k, n in neg_kinds.items() if n >= 20]  # the larger negative kinds
        if all(MIN_TEST_SHARE <= s <= 1 - MIN_TEST_SHARE for s in shares) and \
                all(0.3 <= s <= 0.7 for s in loose) and \
                all(0 < nper[k] < n for k, n in neg_kinds.items()):
            break
    else:
        raise SystemExit("no salt balances the split")
    for r in rows:
        r["split"] = "test" if r["id"] in test else "dev"

    with OUT.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")

    by = Counter((e["type"], r["split"]) for r in rows for e in r["entities"])
    nby = Counter((n["kind"], r["split"]) for r in rows for n in r["negatives"])
    recs = Counter(r["split"] for r in rows)
    print(f"{len(rows)} records (dev {recs['dev']}, test {recs['test']}), split salt {salt}")
    print(f"{'type':<18}{'dev':>6}{'test':>6}{'total':>7}")
    for t in MINIMUM:
        print(f"{t:<18}{by[t, 'dev']:>6}{by[t, 'test']:>6}{totals[t]:>7}")
    ent_dev = sum(v for (t, s), v in by.items() if s == "dev")
    ent_test = sum(v for (t, s), v in by.items() if s == "test")
    print(f"{'all entities':<18}{ent_dev:>6}{ent_test:>6}{ent_dev + ent_test:>7}")
    for k in sorted({k for k, _ in nby}):
        print(f"- {k:<16}{nby[k, 'dev']:>6}{nby[k, 'test']:>6}{nby[k, 'dev'] + nby[k, 'test']:>7}")
    neg_dev = sum(v for (k, s), v in nby.items() if s == "dev")
    print(f"{'all negatives':<18}{neg_dev:>6}{neg_total - neg_dev:>6}{neg_total:>7}")
    if problems:
        print("BELOW MINIMUM: " + "; ".join(problems), file=sys.stderr)
        return 1
    print(f"wrote {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
