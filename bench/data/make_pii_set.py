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
value labelled, minimum counts per type), and writes one JSON record per line with sorted keys.
Splits: RECORDS (pii-001 to pii-160) are all "dev" - they were read while the redactor was
developed; TEST_RECORDS (pii-161 on) are "test", written afterwards, blind to the redactor.
Standard library only; the output is byte-for-byte reproducible.
"""

from __future__ import annotations

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
TEST_MINIMUM = {
    "PERSON": 110, "ADDRESS": 45, "EMAIL": 25, "PHONE": 40, "CREDIT_CARD": 15, "IBAN": 10,
    "IP_ADDRESS": 10, "US_SSN": 8, "UK_NINO": 8, "DATE_OF_BIRTH": 12, "SECRET": 12,
}
MIN_TOTAL_ENTITIES = 400
MIN_NEGATIVES = 120
MIN_TEST_NEGATIVES = 120

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

# Test split (pii-161 on): written after the first 160 records had been read during the redactor's
# development (those are all dev now), by someone who had not seen the redactor's rules or output.
TEST_RECORDS: list[tuple[str, str]] = [
    # ---------------------------------------------------------------- questions
    ("q", "Good morning, my name is [[P|Adebayo Ogunleye]]. The {{PRODUCT|Tecno Camon 20}} I bought has no "
          "sound. Please courier the replacement to [[A|15 Bode Thomas Street, Surulere, Lagos 101283]]."),
    ("q", "can u ring me back on [[T|+234 803 555 0192]]?? been on hold 40 mins about {{ID|case 771204}}"),
    ("q", "Hello, I'm [[P|Chiamaka Eze]]. I paid with [[CC|4539 1488 0343 646?]] but the receipt shows "
          "someone else's name, [[P|Emeka Obi]]. Who is that?"),
    ("q", "Salaam, this is [[P|Aminu Bello Danjuma]] from {{LOC|Kano}}. Can the {{PRODUCT|Hajj Saver}} "
          "account be opened for my brother [[P|Sani]] too?"),
    ("q", "I'm [[P|Karthikeyan Subramanian]], customer since {{DATE|2019}}. My new address is "
          "[[A|No. 22, 3rd Main Road, Gandhi Nagar, Adyar, Chennai 600020]] - please update before the "
          "{{DATE|Diwali}} dispatch."),
    ("q", "Pls send OTP to [[T|+91 44 5550 2211]] not to my old number. Account name "
          "[[P|Lakshmi Venkataraman]]."),
    ("q", "My mother [[P|Sravani Reddy]] (DOB [[DOB|18/06/1954]]) needs to be added as nominee. She lives "
          "with us at [[A|Flat 3B, Sri Sai Residency, Road No. 12, Banjara Hills, Hyderabad 500034]]."),
    ("q", "Hi, [[P|Anirban]] here. Is {{PRODUCT|Netflix Premium}} included with the {{PRODUCT|Jio Fiber}} "
          "plan or do I pay the {{PRICE|₹649}} separately?"),
    ("q", "Why does my profile show [[P|Gurpreet Kaur Sandhu]] when I changed it to "
          "[[P|Gurpreet Kaur Gill]] after the wedding in {{DATE|February}}?"),
    ("q", "Please call [[P|Harjit]] at [[T|+44 121 496 0734]] regarding the damaged "
          "{{PRODUCT|Dyson Airwrap}}."),
    ("q", "안녕하세요 - sorry, English: I'm [[P|Park Ji-hoon]], order {{ID|KR-550318}}. I need the invoice "
          "addressed to [[A|Apt 1102, 45 Teheran-ro 8-gil, Gangnam-gu, Seoul 06234]]."),
    ("q", "My Korean phone is [[T|+82 10-5555-0134]], can you add it as the second factor? My email is "
          "[[E|seoyeon.kim@example.kr]]."),
    ("q", "Hi, I'm [[P|Somchai Wongsakul]]. The hotel charged [[CC|5425 2334 3010 990?]] twice for the "
          "{{LOC|Phuket}} stay, {{PRICE|THB 12,800}} each."),
    ("q", "Can you ship to [[A|99/12 Moo 4, Sukhumvit Soi 39, Khlong Tan Nuea, Watthana, Bangkok 10110]]? "
          "Recipient [[P|Ploy]], phone [[T|+66 2 555 0188]]."),
    ("q", "Magandang araw! I'm [[P|Maria Luz Dela Cruz]]. I sent the payment from [[T|+63 917 555 0123]] "
          "using {{ORG|GCash}} but the order still says unpaid."),
    ("q", "Hello, my SSS account is fine but my US SSN [[SSN|431-22-7809]] was entered wrong on the 1099, "
          "can [[P|Jun]] from your tax team fix it?"),
    ("q", "Merhaba, I'm [[P|Elif Yıldırım]]. Please deliver to "
          "[[A|Bağdat Caddesi No: 145 D: 6, 34728 Kadıköy/İstanbul]] after 18:00; nobody's home before."),
    ("q", "The {{PRODUCT|Turkcell}} number [[T|+90 212 555 01 45]] is my office line - please use "
          "[[T|+905325550178]] for SMS."),
    ("q", "I'm [[P|Dariush Tehrani]], I'd like to close my account. Refund the balance to "
          "[[IBAN|DE?? 1001 0010 0987 6543 21]] please."),
    ("q", "My daughter [[P|Shirin]] was born [[DOB|2 Farvardin 1385]] - that's [[DOB|22 March 2006]] - "
          "which one should I enter in the form?"),
    ("q", "Добрий день. I'm [[P|Oksana Kovalenko]], I moved from {{LOC|Kharkiv}} to "
          "[[A|vul. Khreshchatyk 22, kv. 14, Kyiv 01001]]. Can I keep the same tariff?"),
    ("q", "Please send the documents to [[P|Taras Shevchuk]] at [[E|taras.shevchuk@example.ua]] and copy "
          "[[E|legal@example.com.ua]]."),
    ("q", "Γεια σας, this is [[P|Eleni Papadopoulou]]. The {{PRODUCT|Philips Hue}} starter kit never "
          "reached [[A|Ermou 48, 3rd floor, 105 63 Athina]]."),
    ("q", "Call me on [[T|+30 21 0555 0147]] or my husband [[P|Giorgos]] on [[T|+30 697 555 0182]]. We're "
          "only home in the evening."),
    ("q", "Olá! I'm [[P|João Pedro Ferreira]]. My card [[CC|4916 3380 2215 774?]] was blocked abroad - I'm "
          "in {{LOC|Porto}} until {{DATE|Sunday}}."),
    ("q", "Can I pay from a Portuguese account? It's [[IBAN|PT?? 0033 0000 4531 2890 1237 5]], holder "
          "[[P|Inês Carvalho]]."),
    ("q", "Oi, tudo bem? I'm [[P|Thiago Albuquerque]], the {{PRODUCT|Kindle Paperwhite}} was delivered to "
          "the wrong flat. Correct address: "
          "[[A|Rua Oscar Freire, 827, apto 52, Jardins, São Paulo - SP, 01426-001]]."),
    ("q", "WhatsApp me on [[T|+55 11 91234-5678]] please, I can't take calls at work. [[P|Luana]]"),
    ("q", "Hola, soy [[P|Guadalupe Hernández Ríos]]. Necesito la factura a nombre de mi empresa, "
          "{{ORG|Tacos El Güero SA de CV}}, pero el envío a "
          "[[A|Av. Insurgentes Sur 1602, Piso 4, Col. Crédito Constructor, 03940 Ciudad de México, CDMX]]."),
    ("q", "My number in {{LOC|Mexico}} is [[T|+52 55 5555 0147]]. My brother [[P|Chuy]] will pick up the "
          "parcel if I'm out."),
    ("q", "Hei! I'm [[P|Sigrid Haugland]]. Can the {{PRODUCT|Volvo}} charging cable be returned to "
          "[[A|Storgata 15B, 0184 Oslo]] instead of the warehouse?"),
    ("q", "I'm [[P|Mikael Lindqvist]] and I can't log in. My phone is [[T|+46 8 555 014 72]], email "
          "[[E|mikael.lindqvist@example.se]]."),
    ("q", "Hej, [[P|Freja Mortensen]] here. Please update my address to "
          "[[A|Nørrebrogade 44, 2. tv., 2200 København N]]."),
    ("q", "Hyvää päivää, I'm [[P|Aino Virtanen]]. Transfer the deposit from "
          "[[IBAN|FI?? 1234 5600 0007 85]] before {{DATE|Juhannus}}, please."),
    ("q", "Goedemiddag, this is [[P|Femke de Vries]]. My {{PRODUCT|Gazelle}} bike order {{ID|NL-448120}} "
          "should go to [[A|Oudegracht 158-bis, 3511 AZ Utrecht]]."),
    ("q", "Can [[P|Bram van Dijk]] collect my parcel? He'll bring his ID. My number is "
          "[[T|+31 20 555 0147]]."),
    ("q", "Halò, I'm [[P|Mòrag NicDhòmhnaill]]. The holiday let at "
          "[[A|Taigh na Mara, Tobermory, Isle of Mull PA75 6NT]] was double-booked for {{DATE|July}}."),
    ("q", "Hi it's [[P|Calum MacLeòid]] - what's your {{LOC|Inverness}} office number? I only have "
          "[[T|0131 496 0512]] and nobody picks up."),
    ("q", "Hi, I'm [[P|Hazel]]. I ordered the desk in the {{WORD|hazel}} finish but got walnut - can I "
          "swap it, order {{ID|#2290411}}?"),
    ("q", "[[P|Rusty]] here (real name [[P|Russell Oyelaran]]). The {{WORD|rusty}} hinge on the "
          "{{PRODUCT|IKEA Pax}} wardrobe came in the box like that."),
    ("q", "Is {{DRUG|atorvastatin}} covered, or only {{DRUG|Crestor}}? Asking for my dad, "
          "[[P|Sunday Okafor-Eze]], his policy is {{ID|MED-339021}}."),
    ("q", "Hi, I {{WORD|trust}} you can help: my husband [[P|Trust Mahlangu]] died in {{DATE|January}} and "
          "I need to close his account."),
    ("q", "I'm [[P|Precious Nwachukwu]]. I got charged {{PRICE|£14.99}} for {{PRODUCT|Spotify}} but I "
          "{{WORD|cancelled}} last month."),
    ("q", "My SSN [[SSN|318-47-2265]] is showing on the printed statement. Why is the full number printed?"),
    ("q", "Hi there, what's the status on refund {{ID|RF-551902}}? I'm [[P|Blessing Adeyinka]], "
          "[[E|blessing.a@example.com.ng]]."),
    ("q", "I need the {{ORG|HMRC}} letter to show my NINO [[NINO|JK 48 20 11 B]], not my partner's "
          "([[NINO|PR 55 73 18 C]]). We're [[P|Ewan]] and [[P|Isla Fraser]]."),
    ("q", "Our API key leaked in a {{PRODUCT|GitHub}} gist: "
          "[[KEY|AIzaSyD3x9Kq-2LmT7vWpZ0bN4cR8fY1sH6jUeA]]. Can you disable it on your side too?"),
    ("q", "Why is my login from [[IP|203.0.113.145]] blocked? I'm working from the {{ORG|Hilton}} in "
          "{{LOC|Lisbon}} this week."),
    ("q", "Could you {{WORD|page}} [[P|Page Whitaker]] for me? She's my account rep and her phone "
          "[[T|+1 (212) 555-0147]] goes straight to voicemail."),
    ("q", "Is there a free number I can call from {{LOC|Ireland}}? The {{NUM|0800}} one on your site "
          "doesn't work for me, and [[T|1-800-555-0199]] is a US number."),
    ("q", "Hello, is [[T|0800 123 4567]] still your complaints line? My name is [[P|Chance Okeke]]."),
    ("q", "I was born on [[DOB|29 February 1996]] and your form says that date doesn't exist. Fix please!"),
    ("q", "Password for the shared mailbox is [[KEY|Tr0mbone!Lagoon77]] - please add [[P|Ivy Chen-Mensah]] "
          "to it."),
    # ---------------------------------------------------------------- documents
    ("d", "CRM note {{DATE|2025-05-14}} ([[P|Tolulope Fashola]], Tier 1): caller [[P|Olumide Adekunle]] "
          "asked to move the {{PRODUCT|Fibre 500}} installation to "
          "[[A|Flat 6, 21 Admiralty Road, Lekki Phase 1, Lagos 106104]]. Callback [[T|+234 802 555 0177]]. "
          "Engineer slot {{DATE|Thursday AM}}."),
    ("d", "Ticket {{ID|HD-20417}}\nRequester: [[P|Ngozi Chukwuemeka]] "
          "<[[E|ngozi.chukwuemeka@example.com]]>\nSubject: charged after cancelling\n"
          "Body: I cancelled {{PRODUCT|Showmax}} on {{DATE|3 April}} and was still charged "
          "{{PRICE|₦4,900}} on [[CC|5399 8312 0045 112?]]."),
    ("d", "KYC record\nName: [[P|Abubakar Sadiq Usman]]\nDOB: [[DOB|1981-09-07]]\n"
          "Address: [[A|No. 14 Ahmadu Bello Way, Kaduna 800283]]\n"
          "Phone: [[T|+234 706 555 0138]]\nRisk rating: medium"),
    ("d", "Shipping label\nSHIP TO: [[P|Meenakshi Sundaram]]\n"
          "[[A|Plot 41, 2nd Cross Street, Anna Nagar West, Chennai, Tamil Nadu 600040]]\n"
          "PH: [[T|9444055501]]\nFROM: {{ORG|Amazon Fulfilment}} {{LOC|Hosur}}\n"
          "AWB {{TRACK|1Z4A07W90398823310}}  WT 1.2 kg"),
    ("d", "HR letter\nDear [[P|Venkata Ramana Rao]],\nWe are pleased to confirm your transfer to the "
          "{{LOC|Pune}} office from {{DATE|1 July 2025}}. Your relocation allowance of {{PRICE|₹1,50,000}} "
          "will be paid to the salary account on file. Please direct questions to "
          "[[P|Shalini Chatterjee]], HR Business Partner, at [[E|shalini.chatterjee@example.co.in]].\n"
          "Yours sincerely,\n[[P|Debasish Mukherjee]]\nHead of People"),
    ("d", "Appointment reminder: Dear [[P|Rupali Banerjee]], your appointment with Dr [[P|Sen]] at "
          "{{ORG|Apollo Gleneagles}} is on {{DATE|Tuesday 10 June}} at 10:30. Please bring your "
          "{{DRUG|levothyroxine}} prescription. To reschedule call [[T|+91 33 5550 6644]]."),
    ("d", "Bank letter\n[[P|Mohammad Rafiqul Islam]]\n[[A|House 12, Road 7, Dhanmondi, Dhaka 1205]]\n"
          "\nDear Sir,\nYour remittance of {{PRICE|USD 2,400}} from [[IBAN|GB?? HBUK 4012 7612 3456 78]] "
          "has been credited. Reference {{ID|RMT-0091188}}."),
    ("d", "Chat transcript {{ID|#CH-88102}}\nCustomer ([[P|Manpreet Dhaliwal]]): hi my card "
          "[[CC|4485 2740 1152 618?]] got swallowed by the ATM at {{LOC|Southall}}\n"
          "Agent ([[P|Kelly]]): sorry to hear that! can you confirm your date of birth?\n"
          "Customer: [[DOB|03/11/1990]]\nAgent: thanks, new card ordered to your home address."),
    ("d", "Tenant reference request\nApplicant: [[P|Kim Min-seo]]\n"
          "Current address: [[A|302-dong 1504-ho, 88 Banpo-daero, Seocho-gu, Seoul 06591]]\n"
          "Employer: {{ORG|Samsung SDS}}\nPrevious landlord: Mr. [[P|Choi]], [[T|+82 2 555 0117]]"),
    ("d", "Travel booking {{ID|PNR 7XQ2KL}}\nPassenger 1: [[P|Lee Dong-hyun]] (DOB [[DOB|1979-04-23]])\n"
          "Passenger 2: [[P|Lee Soo-ah]] (DOB [[DOB|2012-12-01]])\n"
          "Flight {{ID|KE 907}} {{LOC|ICN}}-{{LOC|LHR}} {{DATE|18 Aug}}\n"
          "Contact: [[E|donghyun.lee@example.co.kr]]"),
    ("d", "Field service log: engineer [[P|Nattapong Srisuk]] attended "
          "[[A|88/5 Soi Ari 4, Phahonyothin Road, Phaya Thai, Bangkok 10400]] on {{DATE|5 May}}. "
          "{{PRODUCT|Daikin}} split unit ({{SKU|FTKC35}}) regassed. Customer [[P|Kanya]] signed."),
    ("d", "Email pasted into ticket {{ID|#61207}}:\n> From: [[P|Jose Miguel Reyes]] "
          "<[[E|jmreyes@example.ph]]>\n> Hi, please deliver to "
          "[[A|Unit 8B, One Serendra, 11th Avenue, Bonifacio Global City, Taguig 1634]]. My landline is "
          "[[T|+63 2 8555 0199]].\n> Salamat,\n> [[P|Jose Miguel]]"),
    ("d", "Payroll import (US): row 3 [[P|Corazon Villanueva]] SSN [[SSN|602-18-4437]]; row 4 "
          "[[P|Rodel Bautista]] SSN [[SSN|585-33-1092]]; row 5 [[P|Marites Ocampo]] SSN missing."),
    ("d", "Incident {{ID|SEC-3310}}: repeated login failures for [[E|burak.celik@example.com.tr]] from "
          "[[IP|185.220.101.34]] and [[IP|45.83.64.12]]. User [[P|Burak Çelik]] confirmed he was in "
          "{{LOC|Ankara}} at the time. Password reset forced."),
    ("d", "Customer record\nName: [[P|Zeynep Aydın]]\nIBAN: [[IBAN|TR?? 0006 1005 1978 6457 8413 26]]\n"
          "Tel: [[T|0532 555 01 88]]\nAddress: "
          "[[A|Atatürk Bulvarı No: 199/7, Kavaklıdere, 06680 Çankaya/Ankara]]"),
    ("d", "Visa support letter\nTo whom it may concern,\nThis is to confirm that [[P|Farshid Rahimi]], "
          "born [[DOB|12 October 1988]], is employed by {{ORG|Parsian Software}} as a senior engineer. He "
          "will attend the {{ORG|Web Summit}} in {{LOC|Lisbon}} from {{DATE|11 to 14 November}}.\n"
          "Signed, [[P|Mahnaz Karimi]], HR Manager"),
    ("d", "Ticket {{ID|#40977}}: customer [[P|Roya Hosseini]] reports the {{PRODUCT|Snapp}} integration "
          "fails from [[IP|2001:db8:a0b:12f0::1]]. Token in request headers: "
          "[[KEY|Bearer_5fe1c7a92d3b44e08a6f19bd2c70e3a1]]. Agent masked it in the UI."),
    ("d", "Delivery note: [[P|Andriy Melnyk]], [[A|vul. Shevchenka 17, kv. 3, Lviv 79005]], tel. "
          "[[T|+380 32 555 0147]]. Order {{ID|UA-30021}}: 2 x {{PRODUCT|Ecoflow River 2}} "
          "({{PRICE|₴19,998}}). Deliver by {{ORG|Nova Poshta}}."),
    ("d", "Refugee support form\nFull name: [[P|Olena Bondarenko]]\n"
          "Date of birth: [[DOB|07.05.1984]]\nChildren: [[P|Mykola]] (9), [[P|Sofiia]] (6)\n"
          "Current address: [[A|14 Grafton Street, Flat 2, Cambridge CB1 1DS]]\n"
          "NI number: [[NINO|SJ 30 52 97 A]]"),
    ("d", "Hotel reservation {{ID|RES-992014}}\nGuest: [[P|Dimitris Konstantinou]]\n"
          "Check-in {{DATE|2 Sep}}, check-out {{DATE|6 Sep}}, {{LOC|Santorini}}\n"
          "Guarantee card: [[CC|4024 0071 5336 811?]]\nMobile: [[T|+30 694 555 0123]]\n"
          "Rate {{PRICE|€310}}/night"),
    ("d", "Meeting minutes {{DATE|2025-03-27}}: present [[P|Katerina Nikolaidou]], [[P|Yannis Georgiou]], "
          "[[P|Sotiris]]. Agreed to move the {{LOC|Thessaloniki}} warehouse to the {{PRODUCT|SAP S/4HANA}} "
          "stack by {{DATE|Q4}}. [[P|Yannis]] to brief {{ORG|Deloitte}}."),
    ("d", "Bank letter\n{{ORG|Banco Atlântico}}\n[[P|Rui Manuel Sousa]]\n"
          "[[A|Rua Augusta 120, 2.º Esq., 1100-053 Lisboa]]\n"
          "Re: account [[IBAN|PT?? 0035 0697 0063 8174 3209 8]]\n"
          "We write to inform you of a change to overdraft fees from {{DATE|1 January 2026}}. Fees rise to "
          "{{PRICE|€7.50}} per month."),
    ("d", "Pedido {{ID|BR-7732019}}\nCliente: [[P|Ana Beatriz Nascimento]]\n"
          "CPF: on file\nEndereço: "
          "[[A|Av. Sete de Setembro, 1450, Bloco C, apto 803, Vitória, Salvador - BA, 40080-001]]\n"
          "Tel: [[T|+55 71 98765-4321]]\nPagamento: [[CC|5067 2313 4412 009?]] ({{ORG|Elo}})"),
    ("d", "WhatsApp export pasted by agent:\n[10:02] [[P|Lucas Gonçalves]]: boa tarde, my email is "
          "[[E|lucas.goncalves@example.com.br]]\n[10:03] [[P|Lucas Gonçalves]]: and I'm at "
          "[[A|Rua das Laranjeiras, 300, casa 2, Rio de Janeiro - RJ, 22240-003]]\n"
          "[10:05] Agent: obrigado [[P|Lucas]]!"),
    ("d", "Factura {{ID|MX-A-00418}}\nReceptor: [[P|Ximena Castañeda Olvera]]\n"
          "Domicilio: [[A|Calle Hidalgo 312, Col. Centro, 44100 Guadalajara, Jal.]]\n"
          "Importe: {{PRICE|MXN 8,120.00}}\nMétodo de pago: transferencia"),
    ("d", "Travel booking confirmation\nPassenger: Mr. [[P|Alejandro Vázquez]]\n"
          "From {{LOC|Monterrey}} to {{LOC|Cancún}}, {{DATE|23 December}}, flight {{ID|VB 1124}}\n"
          "Contact phone: [[T|+52 81 5555 0163]]\nEmail: [[E|alex.vazquez@example.mx]]\n"
          "Fare {{PRICE|MXN 2,349}}"),
    ("d", "Warranty claim {{ID|WC-10452}}: [[P|Henrik Solberg]], "
          "[[A|Postboks 6004, Etterstad, 0601 Oslo]]. {{PRODUCT|Jøtul F 305}} stove, door glass cracked. "
          "Payment for the part from [[IBAN|NO?? 8601 1117 947]]."),
    ("d", "Employee record\nName: [[P|Astrid Johansson]]\nPersonnummer: on file\n"
          "Address: [[A|Drottninggatan 53, 111 21 Stockholm]]\n"
          "Bank: [[IBAN|SE?? 8000 0810 5934 5123 4567]]\nMobile: [[T|+46 70 555 01 64]]\n"
          "Manager: [[P|Nils Ekström]]"),
    ("d", "Parcel exception: [[P|Søren Kjærgaard]] not at home, parcel left at {{ORG|Netto}} pickup point. "
          "Address on label: [[A|Vesterbrogade 112, 3. th., 1620 København V]]. Tracking "
          "{{TRACK|00370723419900155628}}."),
    ("d", "Incident {{ID|IT-7780}} ({{ORG|Nordea}} pilot): service account password "
          "[[KEY|Kalevala#2025!Rx]] found in a {{PRODUCT|Confluence}} page edited by [[P|Juha Mäkinen]]. "
          "Rotated {{DATE|12 May}}."),
    ("d", "Klantnotitie: [[P|Sanne Bakker]] belt over factuur {{ID|2025-0412}}. Nieuw adres: "
          "[[A|Prinsengracht 263-1, 1016 GV Amsterdam]]. Terugstorting naar "
          "[[IBAN|NL?? RABO 0123 4567 89]]. Tel [[T|06 55501234]]."),
    ("d", "Ticket {{ID|#51140}} - [[P|Joost Visser]] ({{ORG|Philips}}) reports that the {{VER|v3.9.2}} "
          "agent on [[IP|192.0.2.88]] can't reach the proxy at [[IP|10.20.30.40]]. Works on {{VER|v3.8}}."),
    ("d", "Croft tenancy file\nTenant: [[P|Eilidh MacAskill]]\n"
          "Address: [[A|4 Baile na Cille, Uig, Isle of Lewis HS2 9JA]]\n"
          "Phone: [[T|01851 555 014]]\nNI number: [[NINO|SH 11 90 47 C]]\n"
          "Rent: {{PRICE|£1,200}} per year"),
    ("d", "GP appointment reminder: [[P|Ruairidh Mac an t-Saoir]], you have an appointment at "
          "{{ORG|Broomhill Medical Practice}}, [[A|2/1, 48 Byres Road, Glasgow G12 8TB]], on "
          "{{DATE|Monday 7 July}} at 09:10. Reply CANCEL to [[T|07700 900374]]."),
    ("d", "Chat transcript:\nUser: my name's [[P|Sunny]], the {{WORD|sunny}} yellow case was out of stock "
          "so I got the blue\nAgent ([[P|Rosa]]): no problem, I'll note it on the order {{ID|#661093}}\n"
          "User: thanks, email me at [[E|sunny.okon@example.com]]"),
    ("d", "Onboarding form\nName: [[P|Sterling Achebe]]\nEmail: [[E|s.achebe@example.org]]\n"
          "Home: [[A|1450 Peachtree St NE, Unit 902, Atlanta, GA 30309]]\n"
          "SSN: [[SSN|254-61-8830]]\nDOB: [[DOB|Nov 4, 1992]]\n"
          "Salary: paid in {{WORD|sterling}} via the {{LOC|UK}} entity"),
    ("d", "Customer complaint: \"Your courier [[P|Brook]] left my {{PRODUCT|Le Creuset}} casserole by the "
          "{{WORD|brook}} at the end of the garden.\" Address: "
          "[[A|Millstream Cottage, Lower Slaughter, Cheltenham GL54 2HR]]."),
    ("d", "Server log:\n{{DATE|2025-06-01T08:14:22Z}} auth ok user=[[E|ops@example.io]] "
          "src=[[IP|198.51.100.190]]\n{{DATE|2025-06-01T08:14:25Z}} token issued "
          "[[KEY|ya29.a0AfB_byC7xQm2LpT9nVzR4kW8]] src=[[IP|198.51.100.190]]\n"
          "{{DATE|2025-06-01T08:15:02Z}} auth fail user=root src=[[IP|2001:db8:3c4d:15::1a2f]]"),
    ("d", ".env file attached to ticket {{ID|#70219}} (agent redacted before forwarding):\n"
          "APP_ENV=production\nDATABASE_URL=postgres://app:[[KEY|N7v!pQ2zLw9s]]@db.internal:5432/app\n"
          "TWILIO_AUTH_TOKEN=[[KEY|9f3ac17be2d04e58a6c1b7d9e4f20a63]]\n"
          "LOG_LEVEL=info"),
    ("d", "KB article {{ID|KB-2207}}: Updating a payout account. Sellers can change their payout IBAN in "
          "{{PRODUCT|Seller Hub}} under {{WORD|Payments}}. The change takes effect after the next payout "
          "cycle (every {{NUM|14}} days). We never ask sellers to send account numbers by e-mail or chat; "
          "if someone does, report it to the {{ORG|Trust & Safety}} team. Sellers in {{LOC|Norway}} and "
          "{{LOC|Switzerland}} must also upload a bank statement. Payouts under {{PRICE|€10}} roll over to "
          "the next cycle."),
    ("d", "KB passage: Our {{LOC|Rotterdam}} and {{LOC|Gothenburg}} depots close for {{DATE|Christmas}} "
          "from {{DATE|24 December}} to {{DATE|2 January}}. Orders placed after {{DATE|19 December}} ship "
          "in the new year. {{PRODUCT|Express Plus}} costs {{PRICE|€12.95}} and is not available to the "
          "{{LOC|Faroe Islands}}."),
    ("d", "Bank letter\n[[P|Ifeoma Okonkwo-Hart]]\n[[A|PO Box 30211, Tucson, AZ 85751]]\n"
          "\nDear Ms. [[P|Okonkwo-Hart]],\nWe noticed a payment of {{PRICE|$1,980.00}} from your card "
          "ending 0002 ([[CC|4000 0000 0000 0002]]) to {{ORG|Skyline Travel}}. If this was not you, call "
          "us on [[T|+1 (520) 555-0163]]."),
    ("d", "Appointment reminder: Hi [[P|Destiny]], this is {{ORG|Bright Smile Dental}}. Your cleaning with "
          "Dr. [[P|Baker]] is on {{DATE|Wed 16 Jul}} at 3:15pm. Call [[T|(415) 555-0129]] to change it. "
          "Bring your {{ORG|Delta Dental}} card."),
    ("d", "Patient intake form\nName: [[P|Harmony Osei-Bonsu]]\n"
          "DOB: [[DOB|1999-02-14]]\nAddress: [[A|Unit 4/18 Smith Street, Fitzroy VIC 3065]]\n"
          "Mobile: [[T|+61 4 1234 5678]]\nMedications: {{DRUG|salbutamol}} inhaler, {{DRUG|Zyrtec}}\n"
          "Referred by: Dr [[P|Cook]]"),
    ("d", "Lost property log ({{ORG|Sydney Trains}}): wallet handed in at {{LOC|Central}}; contains "
          "licence for [[P|Jack Nguyen-Walsh]], [[A|12/7 Crown Street, Surry Hills NSW 2010]], and a card "
          "[[CC|5555 3412 4444 111?]]."),
    ("d", "Support ticket {{ID|NZ-33019}}: [[P|Aroha Tipene]] asks that all post go to "
          "[[A|PO Box 5511, Wellington 6140]]. Phone [[T|+64 21 555 0146]]."),
    ("d", "Shipping label: TO [[P|Thandiwe Dlamini]], [[A|14 Long Street, Cape Town, 8001]], CELL "
          "[[T|+27 82 555 0192]]. REF {{ID|ZA-99102}}. CONTENTS: {{PRODUCT|Garmin Forerunner 265}}."),
    ("d", "Donor receipt: received with thanks from [[P|Wanjiru Kamau]], "
          "[[A|P.O. Box 40512-00100, Nairobi]], {{PRICE|KES 25,000}} on {{DATE|12 March 2025}}, via "
          "{{ORG|M-Pesa}} from [[T|+254 712 555 014]]."),
    ("d", "Vendor master change request\nSupplier: {{ORG|Schreiner Metallbau GmbH}}\n"
          "Contact: [[P|Wolfgang Schreiner]]\nAddress: "
          "[[A|Schillerstraße 9, 3. OG, 60313 Frankfurt am Main]]\n"
          "Phone: [[T|+49 (0)30 1234567]]\nNew IBAN: [[IBAN|DE?? 5001 0517 5407 3249 31]]\n"
          "Approved by: [[P|Petra Lang]]"),
    ("d", "Reminder letter: Dear Mme [[P|Lefèvre]], your appointment at {{ORG|Clinique du Parc}} is "
          "confirmed for {{DATE|le 3 juin}}. In case of delay call [[T|+33 6 12 34 56 78]] or e-mail "
          "[[E|rdv@example.fr]]. Address: [[A|17 boulevard Carnot, 69001 Lyon]]."),
    ("d", "Access log:\n[[IP|192.0.2.151]] user=[[P|Bui Thi Thu]] action=export rows=1204 {{DATE|09:41}}\n"
          "[[IP|192.0.2.152]] user=[[P|Ha Quang Vinh]] action=login {{DATE|09:44}}"),
    ("d", "UK payroll exception report: [[P|Tom Bell]] NINO [[NINO|YZ 74 10 36 A]] (tax code BR); "
          "[[P|Jade Fisher]] NINO [[NINO|ML 19 62 04 B]] (student loan plan 2); [[P|Reed Holloway]] NINO "
          "[[NINO|WP 88 31 57 D]] (new starter)."),
    ("d", "Escalation: customer [[P|Heather Moss]] says the {{WORD|heather}} print duvet set "
          "({{SKU|DUV-HTH-KG}}) was charged at {{PRICE|£89}} instead of the {{PRICE|£59}} sale price. Card "
          "[[CC|4917 3025 8841 660?]]. Call [[T|020 7946 0321]]."),
    ("d", "Credit check request\nApplicant: [[P|Forrest Delgado]]\n"
          "SSN: [[SSN|530-27-6914]]\nDOB: [[DOB|08/30/1986]]\n"
          "Address: [[A|7711 N Lamar Blvd, Apt 214, Austin, TX 78752]]\n"
          "Phone: [[T|512.555.0184]]"),
    ("d", "Expense report flagged: [[P|Robin Chowdhury]] submitted a {{PRICE|$612}} {{ORG|Delta}} fare "
          "paid with personal card [[CC|3787 344936 7100?]]. Policy requires the corporate {{ORG|Amex}}."),
    ("d", "Canada Post notice: item {{TRACK|LM473192850CA}} for [[P|Genevieve Tremblay]] held at the post "
          "office; deliver to [[A|PO Box 1180, Station Main, Halifax NS B3J 2X1]] after {{DATE|Tuesday}}."),
    ("d", "Order record\nOrder {{ID|#SG-40188}}  placed {{DATE|2025-04-09}}\n"
          "Ship to: [[P|Siti Nurhaliza binti Ahmad]]\n"
          "[[A|Blk 210 Toa Payoh North, #08-1142, Singapore 310210]]\n"
          "Tel [[T|+65 8555 0172]]\nItems: {{SKU|AX-22-BLK}} x2, {{PRICE|S$58.00}}"),
    ("d", "Email in ticket:\n> Hi team, please reset MFA for [[E|i.rasmussen@example.dk]]. Her backup "
          "number is [[T|+45 33 55 50 14]].\n> Thanks, [[P|Ida Rasmussen]]'s manager, [[P|Kasper Holm]]"),
    ("d", "Stolen card report {{ID|SCR-2201}}: [[P|Olive Thornbury]] reports card "
          "[[CC|2223 0031 2200 330?]] stolen in {{LOC|Bath}} on {{DATE|Saturday}}. Replacement to "
          "[[A|Flat 12B, 7 Hove Street, Brighton BN3 2DE]]."),
    ("d", "Automated alert forwarded to support:\nFrom: [[E|security-alerts@example.dev]]\n"
          "To: [[E|ayodele.bankole@example.com]]\nWe found a secret in a public commit to {{WORD|main}}: "
          "[[KEY|ghp_Zx81qRtV0mLk4WnC7bYd2PsE9fHa6JuT3oGi]]. Hi [[P|Ayodele]], please revoke it; the "
          "commit was pushed from [[IP|198.51.100.61]]."),
    ("d", "CI build {{ID|#4471}} log (excerpt, {{VER|runner 2.317.0}}):\n"
          "+ export AWS_SECRET_ACCESS_KEY=[[KEY|tK8vQ2mZr7Lp/W4nX9cBy3HsJ6dF1gEaU0oRiT5e]]\n"
          "+ npm config set "
          "//registry.npmjs.org/:_authToken=[[KEY|npm_Qw3rTy7uIo9pAs1dFg5hJk2lZx8cVb4nM6qE]]\n"
          "+ npm publish\nTriggered by [[P|Kwabena Ofori-Atta]]."),
    ("d", "Mortgage pre-approval\nBorrower: [[P|Marisol Quintero]], SSN [[SSN|623-41-0875]]\n"
          "Co-borrower: [[P|Dwayne Quintero]], SSN [[SSN|623-41-0912]]\n"
          "Earnest money paid with [[CC|5186 0021 7734 590?]] - wait, customer corrected to "
          "[[CC|6011 0009 9013 942?]]\nEmail: [[E|marisol.q@example.com]]"),
    ("q", "I used [[CC|4263 9826 4026 929?]] on your site and also my wife's [[CC|5114 4963 5323 001?]] - "
          "both show pending. Confirmation went to [[E|tunde.bakare@example.co.uk]]. [[P|Tunde]]"),
    ("d", "Webhook config dump in ticket {{ID|#88310}}:\nendpoint: https://hooks.example.com/pay\n"
          "signing_secret: [[KEY|whsec_8Kd2mQz7RtY4vNp1cXe9LbW3]]\n"
          "slack_webhook: https://hooks.slack.com/services/[[KEY|T0001/B0001/Xk9pLm2Qr7sT4vW8yZ1aB3cD]]\n"
          "owner: [[E|platform-team@example.com]] ([[P|Gwen Abernathy]])"),
    ("d", "Forwarded thread:\n> From: [[P|Nkechi Umeh]] <[[E|nkechi.umeh@example.org]]>\n"
          "> Cc: [[E|finance@example.org]]\n> The contractor's wifi password for the {{LOC|Abuja}} site is "
          "[[KEY|Zuma-Rock-4471!]]; please don't share it outside the team."),
    # ---------------------------------------------------------------- answers
    ("a", "Thanks, [[P|Adebayo]]. The replacement {{PRODUCT|Tecno Camon 20}} is booked for delivery to "
          "[[A|15 Bode Thomas Street, Surulere, Lagos 101283]] on {{DATE|Friday}}."),
    ("a", "I've called [[T|+234 803 555 0192]] twice and left a voicemail about {{ID|case 771204}}. We'll "
          "try again at 4pm."),
    ("a", "The name [[P|Emeka Obi]] was printed because of a template error, [[P|Chiamaka]]; your payment "
          "is safe and no one else can see it."),
    ("a", "Your address is now [[A|No. 22, 3rd Main Road, Gandhi Nagar, Adyar, Chennai 600020]], Mr. "
          "[[P|Subramanian]]. The {{DATE|Diwali}} order will go there."),
    ("a", "Done - OTPs will now go to [[T|+91 44 5550 2211]]. If you don't receive one within two minutes, "
          "tap {{WORD|Resend}}."),
    ("a", "I've added [[P|Sravani Reddy]] as nominee. We'll post the confirmation to your home address; "
          "please ask her to sign and return it within {{NUM|30}} days."),
    ("a", "{{PRODUCT|Netflix Premium}} isn't bundled with that plan, [[P|Anirban]], so the {{PRICE|₹649}} "
          "is charged separately."),
    ("a", "I've updated the profile name to [[P|Gurpreet Kaur Gill]]. Congratulations on the wedding!"),
    ("a", "The invoice for order {{ID|KR-550318}} is re-issued to "
          "[[A|Apt 1102, 45 Teheran-ro 8-gil, Gangnam-gu, Seoul 06234]] and emailed to "
          "[[E|seoyeon.kim@example.kr]]."),
    ("a", "Khun [[P|Somchai]], I can see two charges of {{PRICE|THB 12,800}}. One is a pre-authorisation "
          "and will drop off in 7 days; nothing else is needed."),
    ("a", "Yes, we ship to {{LOC|Thailand}}. The parcel for [[P|Ploy]] will go by {{ORG|Kerry Express}}, "
          "and the courier will call [[T|+66 2 555 0188]] before delivery."),
    ("a", "The {{ORG|GCash}} payment from [[T|+63 917 555 0123]] arrived, [[P|Maria Luz]]; the order "
          "status will update within the hour."),
    ("a", "I've asked [[P|Jun]] on the tax team to correct the SSN on the 1099. A new form will be issued "
          "by {{DATE|31 January}}."),
    ("a", "Noted, [[P|Elif]]: the courier will deliver to "
          "[[A|Bağdat Caddesi No: 145 D: 6, 34728 Kadıköy/İstanbul]] after 18:00 and text "
          "[[T|+905325550178]] first."),
    ("a", "The refund of {{PRICE|€312.40}} has been sent to [[IBAN|DE?? 1001 0010 0987 6543 21]]. Your "
          "account will close once it clears, Mr. [[P|Tehrani]]."),
    ("a", "Please enter the Gregorian date, [[DOB|22 March 2006]]. The form doesn't accept the Persian "
          "calendar yet."),
    ("a", "Yes, [[P|Oksana]], the tariff moves with you. Your new address, "
          "[[A|vul. Khreshchatyk 22, kv. 14, Kyiv 01001]], is saved."),
    ("a", "I've sent the documents to [[E|taras.shevchuk@example.ua]] with [[E|legal@example.com.ua]] in "
          "copy."),
    ("a", "The {{PRODUCT|Philips Hue}} kit was returned to our depot in {{LOC|Piraeus}}. We'll resend it "
          "to [[A|Ermou 48, 3rd floor, 105 63 Athina]] tomorrow, [[P|Eleni]]."),
    ("a", "Your card is unblocked, [[P|João Pedro]]. Enjoy {{LOC|Porto}}; the limit abroad is "
          "{{PRICE|€1,000}} per day."),
    ("a", "We can take payment from [[IBAN|PT?? 0033 0000 4531 2890 1237 5]] as long as "
          "[[P|Inês Carvalho]] signs the mandate."),
    ("a", "Sorry about that, [[P|Thiago]]. The courier will collect the {{PRODUCT|Kindle Paperwhite}} from "
          "the neighbour and redeliver to "
          "[[A|Rua Oscar Freire, 827, apto 52, Jardins, São Paulo - SP, 01426-001]]."),
    ("a", "Claro, [[P|Guadalupe]]: the invoice will be in the name of {{ORG|Tacos El Güero SA de CV}} and "
          "the parcel goes to "
          "[[A|Av. Insurgentes Sur 1602, Piso 4, Col. Crédito Constructor, 03940 Ciudad de México, CDMX]]."),
    ("a", "Yes - [[P|Sigrid]], drop the cable at [[A|Storgata 15B, 0184 Oslo]]; the shop there accepts "
          "{{PRODUCT|Volvo}} accessory returns until {{DATE|30 June}}."),
    ("a", "I've sent a login link to [[E|mikael.lindqvist@example.se]]. If it doesn't arrive, we'll call "
          "[[T|+46 8 555 014 72]]."),
    ("a", "The deposit transfer from [[IBAN|FI?? 1234 5600 0007 85]] is scheduled for {{DATE|Monday}}, "
          "well before {{DATE|Juhannus}}."),
    ("a", "Of course, [[P|Femke]]. [[P|Bram van Dijk]] can collect order {{ID|NL-448120}} with his ID; "
          "we'll text [[T|+31 20 555 0147]] when it's ready."),
    ("a", "I'm sorry about the double booking, [[P|Mòrag]]. [[P|Calum]] from our {{LOC|Inverness}} office "
          "will call you about alternatives on {{LOC|Mull}}."),
    ("a", "Swapping to walnut is fine, [[P|Hazel]]. The courier will collect the {{WORD|hazel}} desk on "
          "{{DATE|Tuesday}}."),
    ("a", "{{DRUG|Atorvastatin}} is covered under policy {{ID|MED-339021}}; {{DRUG|Crestor}} needs prior "
          "authorisation. [[P|Sunday]] can fill the generic at any pharmacy."),
    ("a", "I'm very sorry for your loss. To close [[P|Trust Mahlangu]]'s account we need a copy of the "
          "death certificate; you can upload it in the app or post it to "
          "[[A|PO Box 7720, Johannesburg 2000]]."),
    ("a", "I've refunded the {{PRICE|£14.99}}, [[P|Precious]]. {{PRODUCT|Spotify}} shouldn't charge again."),
    ("a", "Refund {{ID|RF-551902}} was paid on {{DATE|Tuesday}}. A receipt is on its way to "
          "[[E|blessing.a@example.com.ng]]."),
    ("a", "The {{ORG|HMRC}} letter now shows [[NINO|JK 48 20 11 B]]. [[P|Isla]]'s number stays on her own "
          "letter only."),
    ("a", "We've disabled that key on our side. Please also delete the gist and create a new key in the "
          "{{PRODUCT|Google Cloud}} console under {{WORD|Credentials}}."),
    ("a", "The block on [[IP|203.0.113.145]] came from our hotel-network rule. I've allow-listed it until "
          "{{DATE|Sunday}}."),
    ("a", "I've messaged [[P|Page]] and asked her to call you back. Her direct line is "
          "[[T|+1 (212) 555-0147]] and she's in until 6pm Eastern."),
    ("a", "From {{LOC|Ireland}}, please use [[T|+353 1 555 0148]]; [[T|0800 123 4567]] only works from "
          "{{LOC|UK}} landlines. Sorry for the trouble, [[P|Chance]]."),
    ("a", "Leap-day birthdays were rejected by a validation bug; I've entered [[DOB|29 February 1996]] "
          "manually."),
    ("a", "[[P|Ivy]] now has access to the shared mailbox. Please change the password you posted - anyone "
          "in this chat could see it."),
    ("a", "Your claim is logged, Ms. [[P|Moss]]. We'll refund the {{PRICE|£30}} difference to the card you "
          "used."),
    ("a", "The wallet is at {{LOC|Central}} station lost property. [[P|Jack]] can collect it with photo "
          "ID, or we can post it to [[A|12/7 Crown Street, Surry Hills NSW 2010]]."),
    ("a", "Hi [[P|Aroha]], all post will now go to [[A|PO Box 5511, Wellington 6140]]. Text alerts stay on "
          "[[T|+64 21 555 0146]]."),
    ("a", "Mr. [[P|Delgado]], the credit check came back clear. We'll mail the card to "
          "[[A|7711 N Lamar Blvd, Apt 214, Austin, TX 78752]]."),
    ("a", "[[P|Genevieve]], your parcel {{TRACK|LM473192850CA}} is held at {{ORG|Canada Post}} until "
          "{{DATE|Tuesday}}, then delivered to [[A|PO Box 1180, Station Main, Halifax NS B3J 2X1]]."),
    ("a", "Your new card will reach [[A|Flat 12B, 7 Hove Street, Brighton BN3 2DE]] in 3-5 days, "
          "[[P|Olive]]. The old one is cancelled."),
    ("a", "Dr. [[P|Baker]] has a free slot on {{DATE|Thursday}} at 9am. Shall I move your cleaning, "
          "[[P|Destiny]]?"),
    ("a", "I can confirm [[P|Lee Soo-ah]]'s seat on {{ID|KE 907}}. Children under 12 need a guardian on "
          "the same booking."),
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


def main() -> int:
    rows = []
    records = [("dev", role, markup) for role, markup in RECORDS] + \
              [("test", role, markup) for role, markup in TEST_RECORDS]
    for i, (split, role, markup) in enumerate(records, 1):
        rid = f"pii-{i:03d}"
        text, entities, negatives = parse(markup)
        check(rid, text, entities, negatives)
        rows.append({"id": rid, "split": split, "role": ROLES[role], "text": text,
                     "entities": entities, "negatives": negatives})
    assert rows[len(RECORDS)]["id"] == "pii-161", "the test split must start at pii-161"

    totals = Counter(e["type"] for r in rows for e in r["entities"])
    neg_total = sum(len(r["negatives"]) for r in rows)
    test_types = Counter(e["type"] for r in rows if r["split"] == "test" for e in r["entities"])
    test_neg = sum(len(r["negatives"]) for r in rows if r["split"] == "test")
    problems = [f"{t}: {totals[t]} < {n}" for t, n in MINIMUM.items() if totals[t] < n]
    problems += [f"test {t}: {test_types[t]} < {n}" for t, n in TEST_MINIMUM.items() if test_types[t] < n]
    if sum(totals.values()) < MIN_TOTAL_ENTITIES:
        problems.append(f"entities: {sum(totals.values())} < {MIN_TOTAL_ENTITIES}")
    if neg_total < MIN_NEGATIVES:
        problems.append(f"negatives: {neg_total} < {MIN_NEGATIVES}")
    if test_neg < MIN_TEST_NEGATIVES:
        problems.append(f"test negatives: {test_neg} < {MIN_TEST_NEGATIVES}")

    with OUT.open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n")

    by = Counter((e["type"], r["split"]) for r in rows for e in r["entities"])
    nby = Counter((n["kind"], r["split"]) for r in rows for n in r["negatives"])
    recs = Counter(r["split"] for r in rows)
    print(f"{len(rows)} records (dev {recs['dev']}, test {recs['test']})")
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
