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
Splits: RECORDS (pii-001 to pii-160), SECOND_RECORDS (pii-161 to pii-326), THIRD_RECORDS
(pii-327 to pii-496) and FOURTH_RECORDS (pii-497 to pii-664) are all "dev" - they were read while
the redactor was developed; TEST_RECORDS (pii-665 on) are "test", written afterwards, blind to the
redactor, with no labelled value reused from the dev records.
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

# Second split (pii-161 to pii-326): written after the first 160 records had been read during the
# redactor's development, blind; it was then read once as a test split and is dev now too.
SECOND_RECORDS: list[tuple[str, str]] = [
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


# Test split (pii-327 on): written after pii-001 to pii-326 had all been read during the redactor's
# development, blind, by someone who had not seen the redactor's rules or output; fresh scenarios,
# people and places, no labelled value reused from the dev records.
# The third test split, written blind; read during development and merged into dev.
THIRD_RECORDS: list[tuple[str, str]] = [
    # ---------------------------------------------------------------- questions
    ("q", "hi, my {{PRODUCT|Vodafone Red}} contract renews next week but I'm abroad. Account holder "
          "[[P|Tsegaye Alemu]], mobile [[T|+44 7700 900 835]]. Can I pause it instead of cancelling?"),
    ("q", "Why did my bill jump to {{PRICE|£61.40}}? I never used roaming in {{LOC|Morocco}}. Number on "
          "the account is [[T|07700 900 218]], name [[P|Charity Onyango]]."),
    ("q", "Out of {{WORD|charity}} I'll assume a mix-up: the {{PRODUCT|5G Home Router}} you sent to "
          "[[A|21 Mossley Hill Drive, Liverpool L17 1AJ]] is the old model."),
    ("q", "Can I transfer my number from {{ORG|Telstra}}? It's [[T|0412 555 093]] and the account is in "
          "my late husband's name, [[P|Bruce Tregenza]]."),
    ("q", "Submitting a claim for the burst pipe at [[A|Lot 4 Wattle Gully Road, Yackandandah VIC 3749]]. "
          "Policy {{ID|HOME-2290175}}. Who is the assessor?"),
    ("q", "My car was hit in the car park on {{DATE|Saturday 14 June}}. The other driver, [[P|Ruairí Mac "
          "Giolla Phádraig]], gave me his number [[T|+353 86 555 0271]] but it's switched off."),
    ("q", "Is hail damage to a {{PRODUCT|Toyota RAV4}} covered under comprehensive, or only third-party "
          "fire and theft?"),
    ("q", "Hello, I am [[P|Wambui Karanja]], parent of [[P|Njeri]] in Year 9. Could the school office update "
          "my email to [[E|wambui.karanja@example.co.ke]]? The old one no longer works."),
    ("q", "Dear admissions, my transcript lists my date of birth as [[DOB|08/11/2003]] but my passport says "
          "[[DOB|11/08/2003]]. Which should I use on the {{ORG|UCAS}} form?"),
    ("q", "Can the registrar send my degree certificate to [[A|Karlsplatz 13, Stiege 2, Tür 7, 1040 Wien, "
          "Austria]]? Student number S2019-44817."),
    ("q", "Could I get a refill of my {{DRUG|sertraline}} 50 mg before {{DATE|Friday}}? I'm [[P|Iris "
          "Fenwick-Law]], born [[DOB|3 January 1971]]."),
    ("q", "The pharmacy app keeps saying my {{DRUG|Ventolin}} inhaler prescription is 'not yet due'. I used "
          "my last one on {{DATE|Tuesday}}."),
    ("q", "Hi, this is [[P|Amber]] in flat 2. The boiler's out again, the {{WORD|amber}} light is flashing. "
          "Can you ask Mr. [[P|Kowalewski]] to "
          "come before {{DATE|the weekend}}? My number is [[T|07700 900 652]]."),
    ("q", "Our landlord wants the deposit paid to [[IBAN|GB?? LOYD 3099 1243 5578 21]] but the lease says "
          "[[IBAN|GB?? NWBK 6071 8812 0043 56]]. Which is right?"),
    ("q", "Shipment {{TRACK|JJD000390007812345}} is stuck in {{LOC|Leipzig}} hub with 'address "
          "incomplete'. It's going to [[A|Rosenthaler Str. 40-41, Hinterhaus, 3. OG, 10178 Berlin]]."),
    ("q", "Hello, my booking {{ID|HB-8812047}} at the {{ORG|Ibis Styles}} says two adults, but it's me "
          "([[P|Kwabena Asante]]) and my son [[P|Yaw Asante]]. Can you fix it?"),
    ("q", "Why is there a {{PRICE|€180}} hold on my card [[CC|4871 0492 3316 551?]] from the hotel? I "
          "checked out on {{DATE|the 9th}}."),
    ("q", "My payslip for {{DATE|May}} shows tax code {{ID|0T}} and NI number [[NINO|WK 83 51 20 C]] - "
          "that isn't mine. Mine ends in B. Who is [[P|Dorcas Pennington]]?"),
    ("q", "Hi payroll, I'm [[P|Lance Oduya]]. Overtime from {{DATE|weeks 22-24}} is missing. Same bank "
          "account as before."),
    ("q", "Can someone {{WORD|lance}} this blister of a problem? The expense tool logs me out every two "
          "minutes."),
    ("q", "I need to file a small claim against my former landlord, [[P|Gideon Sato-Whitmore]], for "
          "{{PRICE|$2,350}}. Do I need his home address or is his business address OK?"),
    ("q", "My name is [[P|Imani Okafor-Reyes]], SSN [[SSN|529-41-7730]]. I got a summons for jury duty "
          "but I moved to {{LOC|Oregon}} in {{DATE|March}}."),
    ("q", "I'd like to change my monthly gift to the {{ORG|Red Cross}} appeal from {{PRICE|£10}} to "
          "{{PRICE|£25}}. Donor ref {{ID|DN-0098812}}, I'm [[P|Patience Mbeki-Harris]]."),
    ("q", "Please stop posting appeals to my late mother, [[P|Ottilie Brandauer]]. Her post still goes to "
          "[[A|Hauptplatz 7, 8010 Graz]]."),
    ("q", "Freezing my {{ORG|PureGym}} membership while I'm on crutches - is that possible? Member "
          "[[P|Sky Halvorsen]], {{ID|#PG-339107}}."),
    ("q", "The gym took two payments from [[IBAN|IE?? BOFI 9000 1723 4518 09]] this month. I'm on the "
          "{{PRODUCT|Off-Peak}} plan."),
    ("q", "{{ORG|KLM}} cancelled my {{ID|KL 1008}} to {{LOC|Amsterdam}}. Can you rebook me and my wife "
          "[[P|Meron Haile]] onto the evening flight? Booking {{ID|ref X4TQ9B}}; any fare difference can go "
          "on [[CC|4403 9315 6620 872?]]."),
    ("q", "I missed my connection in {{LOC|Doha}} - passenger [[P|Shandiin Begay]], frequent flyer "
          "QR 118 402 339. My US cell is [[T|(928) 555-0126]]."),
    ("q", "Why is my electricity bill estimated again? Meter {{ID|MPAN 19 1200 0045 8821}}, supply "
          "address [[A|Flat 5, 9 Tithebarn Street, Preston PR1 1HX]]."),
    ("q", "My direct debit for gas should come from [[IBAN|GB?? HBUK 4005 1571 9942 38]] now, not the old "
          "account. I'm [[P|Hamish Drummond]]."),
    ("q", "Hi! [[P|River Castellanos]] here. Can I get the water bill in both my name and [[P|Autumn "
          "Fairclough]]'s? We split it."),
    ("q", "Any idea when {{WORD|autumn}} billing rates start? Last year it was {{DATE|1 October}}."),
    ("q", "I think I leaked our {{ORG|Twilio}} auth token in an issue comment: "
          "[[KEY|a7c3e91f04b2d86e5f10c9a4b7d3e2f8]]. How do I get it purged from the history?"),
    ("q", "Is it safe that the {{PRODUCT|Jenkins}} job prints "
          "`DOCKER_PASS=[[KEY|dckr_pat_Yq7LmT2vWx9Kb4Rn8Pz1cD3s]]` "
          "in the console? Asking for a friend."),
    ("q", "Quick one: is [[IP|100.64.12.9]] one of your egress IPs? Our firewall logs show it hitting "
          "{{PRODUCT|Postgres}} on 5432."),
    ("q", "Olá, sou a [[P|Rafaela Gouveia]]. The parcel for [[A|Rua do Almada 412, 4.º Esq., 4050-037 "
          "Porto, Portugal]] came back to sender. Why?"),
    ("q", "Hola, me llamo [[P|Wayra Quispe Mamani]]. Mi tarjeta [[CC|4557 8801 2290 314?]] fue rechazada "
          "en la reserva del tour a {{LOC|Machu Picchu}}."),
    ("q", "Please deliver to [[A|Av. Corrientes 1847, Piso 9 Depto B, C1045AAB Ciudad Autónoma de Buenos "
          "Aires, Argentina]] - the doorman is [[P|Ramón]]."),
    ("q", "Can you WhatsApp me on [[T|+54 9 11 5555-0187]]? My name is [[P|Valentina Ibarra]]."),
    ("q", "Kia ora, it's [[P|Tama Ngata]]. My rural delivery address is [[A|1422 State Highway 35, RD 2, "
          "Ōpōtiki 3198]]. The courier keeps saying 'unable to locate'."),
    ("q", "I'm [[P|Guðrún Sigurðardóttir]]. My card [[CC|5217 2903 8814 027?]] was charged in krónur, "
          "not euro. Can you refund the conversion fee?"),
    ("q", "Is the {{PRODUCT|Garmin Fenix 7}} sold with a UK plug adapter? It's a gift for my nephew "
          "[[P|Crispin]]."),
    ("q", "Hello, [[P|Dilani Wickramasinghe]] here. My salary went to [[IBAN|AE?? 0331 2345 6789 0123 456]] "
          "instead of my new account. Who do I ask?"),
    ("q", "Can you reset the password for [[E|b.szabo@example.hu]]? It's [[P|Bence Szabó]]'s account and "
          "he's on leave till {{DATE|the 20th}}."),
    ("q", "I'm applying for the {{PRODUCT|Chase Sapphire}}. Should I enter my ITIN or my SSN "
          "[[SSN|318-04-6527]]? I have both."),
    ("q", "Quick question about the {{PRODUCT|Mindful Movers}} class - does the {{PRICE|$15}} drop-in fee "
          "include a mat?"),
    ("q", "this is [[P|Jade]]. the storage unit {{ID|B-114}} padlock code changed without notice?? and u "
          "charged [[CC|5181 2760 0944 318?]] a {{PRICE|$45}} lockout fee. I need "
          "to get my stuff out {{DATE|tomorrow}}"),
    ("q", "Hi, I'm [[P|Pasang Sherpa]]. Can I get my trekking permit refund sent to "
          "[[A|Ward No. 4, Thamel Marg, Kathmandu 44600, Nepal]]?"),
    ("q", "Wir haben die Kaution noch nicht zurück. Mieter: [[P|Hannelore Schmitt]], Wohnung "
          "[[A|Liebigstraße 22, 2. OG links, 35390 Gießen]]."),
    ("q", "Why did the court portal reject my filing? Case {{ID|CV-2025-001874}}, plaintiff [[P|Noa "
          "Ben-David]], email [[E|noa.bd@example.co.il]]."),
    # ---------------------------------------------------------------- documents
    ("d", "Live chat {{ID|#LC-5530921}} ({{ORG|Three UK}})\n[10:02] Agent [[P|Kirsty]]: Thanks for waiting. "
          "Can I take the account number?\n[10:02] Customer: it's on the bill, {{ID|9938 2210 44}}. Name "
          "[[P|Obinna Chukwu]]\n[10:03] Agent [[P|Kirsty]]: And the address on the account?\n"
          "[10:03] Customer: [[A|88 Stanley Road, Bootle L20 7BZ]]\n[10:04] Agent [[P|Kirsty]]: I've "
          "applied a {{PRICE|£12}} goodwill credit. {{WORD|Will}} that be all?"),
    ("d", "Telecom porting request\nDonor network: {{ORG|EE}}\nNumber to port: [[T|07700 900 497]]\n"
          "PAC: {{ID|PAC 482 913 775}}\nAccount holder: [[P|Shauna Delacroix]]\nDOB: [[DOB|27/04/1989]]\n"
          "Requested date: {{DATE|2025-07-01}}"),
    ("d", "Insurance claim form {{ID|CLM-HM-00781}}\nPolicyholder: [[P|Marjorie Ellsworth]]\n"
          "Address of loss:\n[[A|Rural Route 2, Box 118\nMinnedosa, MB R0J 1E0\nCanada]]\n"
          "Phone: [[T|204-555-0163]]\nCause: wind damage to barn roof\nEstimate: {{PRICE|CAD 14,200}}"),
    ("d", "Motor claim note: third party [[P|Desmond Achterberg]] ({{PRODUCT|VW Golf}}, reg "
          "{{ID|KX19 LMO}}) admitted liability at the scene. Our insured, [[P|Robin Thwaite]], "
          "sustained whiplash; GP letter from Dr [[P|Ferreira-Lowe]] attached."),
    ("d", "Travel insurance claim\nClaimant: [[P|Aigerim Nurlanovna]]\nPassport: N11928374\n"
          "Trip: {{LOC|Almaty}} - {{LOC|Istanbul}}, {{DATE|3-17 May 2025}}\nItems lost: "
          "{{PRODUCT|Sony A7 IV}}, {{PRODUCT|MacBook Air M2}}\nPayout to: "
          "[[IBAN|TR?? 0006 4000 0011 2345 6789 01]]"),
    ("d", "Student record (registry)\nName: [[P|Chen Jiaxin]]\nPreferred name: [[P|Joy]]\n"
          "DOB: [[DOB|2004-02-19]]\nTerm address: [[A|Room 214, Whitworth Hall, Oxford Road, Manchester "
          "M13 9PL]]\nHome address: [[A|Building 6, Unit 2, Room 503, 18 Wensan Road, Xihu District, "
          "Hangzhou, Zhejiang 310012, China]]\nProgramme: {{ID|MSc-DS-2025}}"),
    ("d", "Email to parents (Year 4): The trip to the {{ORG|Natural History Museum}} is on {{DATE|Thursday "
          "12 June}}. Please return consent slips to Mrs [[P|Thistlethwaite]] by {{DATE|Monday}}. "
          "The coach leaves at 8:45 from the school gate; packed lunches only, no nuts. A "
          "{{WORD|joy}} of a day is promised!"),
    ("d", "University finance - tuition refund\nStudent: [[P|Emeka Onyekachi Eze]]\nStudent ID: "
          "{{ID|20231187}}\nRefund: {{PRICE|£4,625.00}} to [[IBAN|GB?? MIDL 4005 1535 6672 90]]\n"
          "Approved by: [[P|Harriet Cole-Ndiaye]] (Fees Office)"),
    ("d", "Pharmacy refill log\n{{DATE|2025-06-02}} [[P|Gwendolyn Price]] - {{DRUG|levothyroxine}} 75 mcg "
          "x 28 - collected\n{{DATE|2025-06-02}} [[P|Tomasz Wróblewski]] - {{DRUG|metformin}} 500 mg x 56 "
          "- delivery to [[A|Flat 1A, 3 Lansdowne Crescent, Cheltenham GL50 2JY]]\n"
          "{{DATE|2025-06-03}} [[P|Pearl Adjei]] - {{DRUG|amlodipine}} 5 mg x 28 - owes {{PRICE|£9.90}}"),
    ("d", "Repeat prescription request (online)\nPatient: [[P|Bartholomew Ashdown]]\nDOB: "
          "[[DOB|14.09.1948]]\nNHS no: 485 777 3456\nItems: {{DRUG|warfarin}} 1 mg, "
          "{{DRUG|bisoprolol}} 2.5 mg\nNominated pharmacy: {{ORG|Boots}} {{LOC|Kettering}}"),
    ("d", "Text thread (landlord app)\nTenant [[P|Marisol Quiñones]]: the smoke alarm in the hallway keeps "
          "chirping\nLandlord [[P|Derek Farthingale]]: I'll send [[P|Mick]] round {{DATE|Wednesday}}, he "
          "has a key\nTenant: ok, I'm at work but my cousin [[P|Luz]] will be in. her cell is "
          "[[T|(347) 555-0112]]"),
    ("d", "Notice to quit\nTo: [[P|Callum Fairbairn]] and [[P|Ishbel Fairbairn]]\nOf: [[A|Top Floor "
          "Flat\n27 Dundas Street\nEdinburgh\nEH3 6QQ]]\nThe landlord, [[P|Alastair Pringle]], requires "
          "possession by {{DATE|31 October 2025}} under ground {{NUM|1}} (landlord intends to sell)."),
    ("d", "Rent ledger export\ntenant,unit,amount,paid_from\n[[P|Ayesha Siddiqui]],{{ID|4B}},"
          "{{PRICE|1450.00}},[[IBAN|NL?? INGB 0006 8412 37]]\n[[P|Joost van den Heuvel]],{{ID|2A}},"
          "{{PRICE|1380.00}},[[IBAN|NL?? ABNA 0512 7734 09]]"),
    ("d", "Exception report {{ID|EXR-44019}} ({{ORG|DPD}} hub {{LOC|Hinckley}})\nConsignment "
          "{{TRACK|15501238874412}}\nConsignee: [[P|Felicity Urquhart]]\nAddress on label: [[A|Unit 3, "
          "Kelburn Business Park, Port Glasgow PA14 6TD]]\nReason: business closed on delivery attempt\n"
          "Next action: redeliver {{DATE|Tue}}"),
    ("d", "Logistics exception (customs): parcel {{TRACK|CX482019377DE}} held at {{LOC|Frankfurt}} - "
          "commercial invoice missing. Importer of record [[P|Sebastián Olmedo]], EORI "
          "ES B12345678, contact [[E|s.olmedo@example.es]] / [[T|+34 655 501 829]]."),
    ("d", "Driver note (scanned): \"Left with Mrs. [[P|Pike]] at no. 9 as per instructions. Gate code "
          "was wrong.\" Recipient address: [[A|11 Orchard Way, Great Shelford, Cambridge CB22 5EX]]."),
    ("d", "Hotel folio {{ID|F-20250614-88}}\nGuest: [[P|Hiroko Matsumoto]]\nRoom {{NUM|1418}}, "
          "{{DATE|13-15 Jun}}\nCard on file: [[CC|3569 9900 1234 567?]] ({{ORG|JCB}})\nHome address: "
          "[[A|2-7-10 Tenjin, Chuo-ku, Fukuoka 810-0001, Japan]]\nMinibar {{PRICE|¥2,400}}"),
    ("d", "Group booking: 12 rooms at the {{ORG|Radisson Blu}} {{LOC|Nairobi}} for the {{ORG|Safaricom}} "
          "offsite, {{DATE|8-10 September}}. Lead guest [[P|Achieng Otieno]], "
          "[[E|achieng.otieno@example.co.ke]], "
          "[[T|+254 722 555 081]]. Deposit {{PRICE|KES 210,000}} paid {{DATE|2 July}}."),
    ("d", "Payroll query (HR case {{ID|HRC-10277}})\nEmployee: [[P|Mateusz Zieliński]]\nNI: [[NINO|PY 40 "
          "18 77 A]]\nIssue: student loan plan 2 deductions started although loan repaid in "
          "{{DATE|April}}.\nResolution: refund {{PRICE|£212.00}} in {{DATE|July}} pay run."),
    ("d", "Payslip (extract)\n{{ORG|Hollybush Care Homes Ltd}}\nEmployee: [[P|Comfort Asamoah]]  NI No: "
          "[[NINO|RJ 55 02 93 D]]\nPeriod: {{DATE|M03}}  Tax code: {{ID|1257L}}\nNet pay {{PRICE|£1,884.16}} "
          "to a/c ****4471"),
    ("d", "Court intake form (family division)\nApplicant: [[P|Yasmin Haddad-Carter]]\nDOB: "
          "[[DOB|19 July 1990]]\nAddress: [[A|c/o Women's Aid, PO Box 3317, Bristol BS1 9AY]]\n"
          "Respondent: [[P|Lyle Carter]]\nRespondent's address: unknown\nInterpreter: none"),
    ("d", "Legal intake (civil), matter {{ID|2025-LI-0552}}\nClient: [[P|Darius Farahani]], SSN "
          "[[SSN|467-20-8815]]\nOpposing party: {{ORG|Summit Ridge Apartments LLC}}\nClient address: "
          "[[A|5020 N Sheridan Rd, Apt 11F, Chicago, IL 60640]]\nConflict check: clear ([[P|Bishop]], "
          "paralegal)"),
    ("d", "Charity donor export (CSV)\ndonor_id,name,email,gift_aid,amount\n{{ID|D-44107}},[[P|Winifred "
          "Oakes]],[[E|winnie.oakes@example.org.uk]],Y,{{PRICE|50.00}}\n{{ID|D-44108}},[[P|Sunil "
          "Bhattacharya]],[[E|sunil.b@example.net]],N,{{PRICE|20.00}}\n{{ID|D-44109}},[[P|Mercy "
          "Adomako]],[[E|mercy.adomako@example.com]],Y,{{PRICE|100.00}}"),
    ("d", "Legacy notification: the estate of the late [[P|Reginald Spurling]] has left {{PRICE|£5,000}} "
          "to the {{ORG|Donkey Sanctuary}}. Executor: [[P|Philippa Spurling]], [[A|The Old Rectory, "
          "Church Street, Much Wenlock, Shropshire TF13 6EP]]."),
    ("d", "Gym membership agreement\nMember: [[P|Marcus Oyelowo-Banks]]\nDOB: [[DOB|Mar 30, 1995]]\n"
          "Plan: {{PRODUCT|24/7 Unlimited}}, {{PRICE|$39.99}}/mo\nBilling card: [[CC|4024 0071 5560 312?]]\n"
          "Emergency contact: [[P|Ngaire Oyelowo]] [[T|+1 (646) 555-0139]]"),
    ("d", "Front-desk note: member [[P|Sterling Mbatha]] (card {{ID|GM-55120}}) says the {{PRODUCT|Peloton}} "
          "bikes in studio 2 are broken. Told him {{ORG|Technogym}} visits {{DATE|Thursday}}. He paid the "
          "locker deposit in "
          "{{WORD|sterling}} cash."),
    ("d", "Airline rebooking (IRROPS)\nPNR {{ID|LQ8ZRT}}\nPax: [[P|Björn Tryggvason]] / [[P|Sólveig "
          "Tryggvadóttir]]\nOrig: {{ID|FI 614}} {{LOC|KEF}}-{{LOC|JFK}} cancelled\nNew: {{ID|FI 612}} "
          "{{DATE|+1 day}}\nContact: [[T|+354 555 0144]], [[E|bjorn.t@example.is]]"),
    ("d", "Passenger complaint (transcribed): \"My name is [[P|Oluwafemi Coker]]. My bag with my "
          "{{DRUG|insulin}} went to {{LOC|Accra}} while I went to {{LOC|Lagos}}. Deliver it to "
          "[[A|7B Adeola Odeku Street, Victoria Island, Lagos 101241, Nigeria]].\""),
    ("d", "Utility bill\n{{ORG|Northumbrian Water}}\nAccount {{ID|6120448819}}\nMr "
          "[[P|Cuthbert Armstrong]]\n[[A|3 Coquet Terrace\nWarkworth\nMorpeth\nNE65 0XN]]\nAmount due "
          "{{PRICE|£47.82}} by {{DATE|14/08/2025}}"),
    ("d", "Electricity account summary: customer [[P|Siobhan Kearney-Walsh]], MPRN {{ID|10 006 882 114}}, "
          "supply at [[A|Apartment 12, The Gasworks, Barrow Street, Dublin 4, D04 TR29, Ireland]]. Direct "
          "debit from [[IBAN|IE?? AIBK 9311 5289 0341 76]]."),
    ("d", "GitHub issue #412: \"Build fails on {{VER|v3.8.0}}\"\n**[[P|Kwame Osei]]** commented:\n"
          "```\nexport AWS_SECRET_ACCESS_KEY=[[KEY|q8Lx2RmT9vWc4Kb7Zn1Yp5Hd3Fs6Jg0EaUoIiN2T]]\n"
          "npm run deploy\n```\n**[[P|Maggie Hartley]]** commented: please rotate that key, this repo is "
          "public."),
    ("d", "Issue thread (self-hosted {{PRODUCT|Gitea}}):\n> config.yml\n> smtp:\n>   host: "
          "mail.internal\n>   user: [[E|noreply@example-build.io]]\n>   password: [[KEY|cR7#vL2q!Mz9wK]]\n"
          "Reply from [[P|Tanvir Hossain]]: removed the password and rotated it, thanks [[P|Lerato]]."),
    ("d", "Slack export #payments-oncall {{DATE|2025-06-18}}\n[[P|Priyanka Iyer]] 09:14 the webhook is "
          "failing from [[IP|203.0.113.219]] again\n[[P|Oscar Lindgren]] 09:15 which key is it using?\n"
          "[[P|Priyanka Iyer]] 09:15 `[[KEY|rk_live_7TqW2xLm9RkV4bNz8cHp]]`\n[[P|Oscar Lindgren]] 09:16 "
          "pls delete that message"),
    ("d", "Slack DM export\n[[P|Giacomo Ferraro]]: can u send me the db creds for staging\n[[P|Aoibheann "
          "Nic Giolla]]: postgres://app:[[KEY|Staging_8xQ!r2Lm]]@[[IP|10.20.3.41]]:5432/orders\n"
          "[[P|Giacomo Ferraro]]: ty"),
    ("d", "users_export_{{DATE|20250611}}.csv\nid,full_name,email,phone,signup_ip\n"
          "{{ID|10441}},[[P|Sandy Okwuosa]],[[E|sandy.ok@example.com]],[[T|+1-615-555-0148]],"
          "[[IP|198.51.100.202]]\n{{ID|10442}},[[P|Yusuf Abdirahman Warsame]],[[E|y.warsame@example.so]],"
          "[[T|+252 61 555 0172]],[[IP|192.0.2.61]]\n{{ID|10443}},[[P|Clementine Roux]],"
          "[[E|clem.roux@example.fr]],[[T|06 55 50 12 84]],[[IP|2001:db8:1c::2f]]"),
    ("d", "Best regards,\n\n[[P|Anneliese Vogelsang]]\nSenior Procurement Manager | {{ORG|Kessler "
          "Maschinenbau GmbH}}\n[[A|Industriestraße 14, 73730 Esslingen am Neckar, Germany]]\nT "
          "[[T|+49 711 5550 3381]] | M [[T|+49 151 5550 2746]]\n[[E|a.vogelsang@example-kessler.de]]"),
    ("d", "--\n[[P|Tomás Ó Ceallaigh]] | Solicitor\n{{ORG|Ó Ceallaigh & Partners}}\n[[A|4 Eyre Square, "
          "Galway H91 FX2C]]\nDDI [[T|091 555 0173]]\nThis e-mail is confidential and may be legally "
          "privileged."),
    ("d", "Voicemail transcript ({{DATE|Tue 10:41}}): \"Hi, this is [[P|Rosalind]] from {{ORG|Harrow "
          "Dental}}, calling for Mr [[P|Ebenezer Quaye]] - sorry, for [[P|Ebenezer]] - about the bridge "
          "fitting. Please call us back on [[T|0-2-0, 7-9-4-6, 0-8-2-2]]. Thanks, bye.\""),
    ("d", "Voicemail (auto-transcribed): \"yeah hi it's [[P|Dusty]] um the delivery for [[A|62 Old "
          "Mill Lane Stroud]] sorry [[A|62 Old Mill Lane, Stroud GL5 3JQ]], the gate's locked and it's all "
          "{{WORD|dusty}} round the back, call me on "
          "[[T|07700 900 776]]\""),
    ("d", "KB article {{ID|KB-3304}}: Porting a number. Customers can port their number to or from any "
          "{{LOC|UK}} network free of charge. Request a PAC by texting PAC to {{NUM|65075}}; it is valid "
          "for {{NUM|30}} days. Porting normally completes within one working day. Agents must never ask "
          "the customer to read out their PIN in a public channel. {{WORD|Grant}} goodwill credit only up "
          "to {{PRICE|£20}} without a team lead."),
    ("d", "Policy note: the {{PRODUCT|Home Plus}} policy excludes gradual water damage, subsidence before "
          "{{DATE|2010}}, and wear and tear. Excess is {{PRICE|£250}} ({{PRICE|£500}} for escape of water). "
          "Claims over {{PRICE|£10,000}} go to the {{ORG|Loss Adjusting}} team in {{LOC|Norwich}}."),
    ("d", "Incident ticket {{ID|SEC-2031}}: credential stuffing against the {{PRODUCT|member portal}}. "
          "Top sources: [[IP|45.83.64.17]], [[IP|45.83.64.18]], [[IP|2001:db8:dead:beef::7]]. Account "
          "of [[P|Clifford Amankwah]] ([[E|c.amankwah@example.gh]]) compromised; password reset and "
          "sessions revoked."),
    ("d", "Firewall change request: allow [[IP|172.16.40.22]] (jump host, owner [[P|Wiremu Pōtae]]) to "
          "reach {{PRODUCT|Redis}} {{VER|7.2}} on port 6379. Requested by [[E|wiremu.potae@example.co.nz]]."),
    ("d", ".env.production (attached to support ticket {{ID|#81120}})\nNODE_ENV=production\nAPP_URL="
          "https://shop.example.com\nJWT_SECRET=[[KEY|f3N8qW1zL6vK0pR9tY4uC2xB7mA5sD]]\nMAILGUN_KEY="
          "[[KEY|key-2b9e41c07f8d5a63e1b0c4d2f9a87e65]]\nDB_HOST=[[IP|10.8.0.14]]"),
    ("d", "Ops runbook snippet pasted in chat by [[P|Fenella Roscoe]]:\n  ssh deploy@[[IP|192.0.2.145]]\n"
          "  sudo -u postgres psql\n  -- temp admin pw: [[KEY|Gl4sgow-Rain-2025]]"),
    ("d", "Direct debit instruction\nName: [[P|Anouk Peeters]]\nAddress: [[A|Meir 78 bus 3, 2000 "
          "Antwerpen, België]]\nIBAN: [[IBAN|BE?? 0018 2245 9931]]\nCreditor: {{ORG|Proximus}}"),
    ("d", "Mandat SEPA\nDébiteur : [[P|Aurélien Chastain]]\nAdresse : [[A|5 rue des Tanneurs, 67000 "
          "Strasbourg]]\nIBAN : [[IBAN|FR?? 3000 4028 3700 0104 7189 143]]\nCréancier : {{ORG|EDF}}"),
    ("d", "Bonifico ricevuto: {{PRICE|€870,00}} da [[P|Ludovica Bernasconi]], IBAN [[IBAN|IT?? B030 "
          "6909 6061 0000 0112 233]], causale \"affitto {{DATE|luglio}} - [[A|Via Solferino 11, 20121 "
          "Milano MI]]\"."),
    ("d", "Tenant screening report\nApplicant: [[P|DeShawn Whitlow]]\nSSN: [[SSN|232-71-4098]]\nDOB: "
          "[[DOB|06/02/1993]]\nPrior address: [[A|1907 Magnolia Ave, Unit C, Shreveport, LA 71104]]\n"
          "Evictions: none\nScore: {{NUM|712}}"),
    ("d", "W-4 correction batch\n[[P|Lorena Villaseñor]] - SSN [[SSN|610-48-2271]] (transposed digits "
          "fixed)\n[[P|Travis McAllister]] - SSN [[SSN|133-92-0456]]\n[[P|Hope-Marie Duplessis]] - SSN "
          "pending"),
    ("d", "Tax preparer intake\nClient: [[P|Kenji Albright-Morales]]\nSSN: [[SSN|078 34 5521]]\n"
          "Spouse: [[P|Daniela Albright]], SSN [[SSN|520-66-1038]]\nAddress: [[A|PO Box 409, Moab, UT "
          "84532]]"),
    ("d", "NI number check (RTI rejections, {{DATE|week 9}})\n[[P|Olumide Bankole-Smith]] - "
          "[[NINO|HE 62 14 93 A]]\n[[P|Rhian Pritchard]] - [[NINO|WP 09 77 36 C]]\n[[P|Stanislav Horák]] "
          "- [[NINO|SK 30 45 18 B]]\n[[P|Pat Kinsella]] - missing"),
    ("d", "Universal Credit letter (scan): Dear [[P|Angharad Llywelyn]], your National Insurance number "
          "[[NINO|LM 81 56 04 B]] has been linked to your claim. Your next payment is on {{DATE|22 "
          "July}}."),
    ("d", "Card dispute summary ({{ORG|Monzo}}): customer [[P|Idris Fairweather]], card "
          "[[CC|5355 2410 8837 604?]], disputes {{PRICE|£389.00}} at {{ORG|Gatwick Duty Free}} on "
          "{{DATE|2 June}}. Customer was in {{LOC|Leeds}} that day (app location)."),
    ("d", "Chargeback evidence pack: order {{ID|#WS-22914}}, cardholder [[P|Mirela Constantinescu]], "
          "card [[CC|4916 0273 5541 882?]], billing address [[A|Str. Lipscani 25, Sector 3, 030031 "
          "București, Romania]], shipped {{TRACK|RO771204519RO}}."),
    ("d", "Fraud alert: three cards tested from [[IP|185.220.101.77]] within 90 seconds: "
          "[[CC|4539 7712 0988 415?]], [[CC|5502 1184 6673 290?]], [[CC|6011 5540 1298 733?]]. All "
          "declined; BIN block added."),
    ("d", "Onboarding checklist for [[P|Nasrin Chowdhury]]: laptop ({{PRODUCT|Dell Latitude 7440}}), "
          "badge, {{PRODUCT|Okta}} account, payroll form. Manager: [[P|Gareth Llewellyn-Jones]]. Start "
          "{{DATE|Monday 4 August}}."),
    ("d", "Meeting notes - vendor review: {{ORG|Zendesk}} renewal at {{PRICE|$48,000}}/yr; {{ORG|Intercom}} "
          "quoted {{PRICE|$41,500}}. [[P|Honor Blackwood]] to get references; we {{WORD|honor}} the old rate "
          "until then. Decision by {{DATE|Q3}}."),
    ("d", "Pastoral care log (confidential)\nPupil: [[P|Eden Marchetti]] (Y11)\nParent: [[P|Chiara "
          "Marchetti]], [[T|07700 900 931]]\nConcern raised by Mr [[P|Okoro]] (form tutor) on {{DATE|5 "
          "March}}."),
    ("d", "Lost & found register, {{ORG|Heathrow T5}}\n{{ID|LF-88102}} black {{PRODUCT|Samsonite}} "
          "carry-on, tag name [[P|Ingeborg Lund]], tag phone [[T|+47 412 55 019]]\n{{ID|LF-88103}} "
          "{{PRODUCT|Kindle}}, no name"),
    ("d", "Shipping manifest (extract)\n1. [[P|Lucas Moreau-Diallo]], [[A|12 avenue Cheikh Anta Diop, "
          "Dakar, Sénégal]], [[T|+221 77 555 01 42]]\n2. [[P|Fatoumata Keïta]], [[A|BP 2210, Bamako, "
          "Mali]]\n3. [[P|Ousmane Traoré]], [[A|Rue 12.34, Ouaga 2000, Ouagadougou, Burkina Faso]]"),
    ("d", "Visitor log, {{ORG|Acme}} {{LOC|Singapore}}\n[[P|Tan Wei Ling]] ({{ORG|DBS}}) 09:02\n"
          "[[P|Muthu Krishnan]] ({{ORG|Singtel}}) 09:40\n[[P|Nurul Aisyah binti Rahman]] 11:15, escorted "
          "by [[P|Clay]]"),
    ("d", "Delivery address change (verified):\nFROM [[A|Blk 415 Ang Mo Kio Ave 10, #08-1142, Singapore "
          "560415]]\nTO [[A|21 Jalan Telawi 3, Bangsar Baru, 59100 Kuala Lumpur, Malaysia]]\nCustomer "
          "[[P|Lim Hui Min]], [[T|+60 12-555 0176]]"),
    ("d", "Press release: {{ORG|Acme}} announces {{PRODUCT|Acme Assist}} {{VER|4.0}}, with offline mode "
          "and support for {{LOC|Brazil}} and {{LOC|Mexico}}. Available {{DATE|September 2025}} from "
          "{{PRICE|$9}} per seat."),
    ("d", "Warranty registration\nOwner: [[P|Keoni Kahananui]]\nAddress: [[A|94-1040 Waipahu St, Unit "
          "207, Waipahu, HI 96797]]\nProduct: {{PRODUCT|Traeger Pro 575}} ({{SKU|TFB57GLE}})\nSerial "
          "{{ID|0057SN114028}}\nPurchased {{DATE|2025-05-30}}"),
    ("d", "Recall notice: {{PRODUCT|KettlePro 2000}} kettles ({{SKU|KP2000-W}}, {{SKU|KP2000-B}}) sold "
          "between {{DATE|March}} and {{DATE|June 2025}} may overheat. Stop using them and contact "
          "{{ORG|KettlePro}} for a refund of {{PRICE|£34.99}}."),
    # ---------------------------------------------------------------- answers
    ("a", "I've paused the {{PRODUCT|Vodafone Red}} plan on [[T|+44 7700 900 835]] for up to three months, "
          "[[P|Tsegaye]]. You won't be charged while it's paused."),
    ("a", "The {{PRICE|£61.40}} includes a one-off {{PRICE|£18}} roaming bundle added on {{DATE|2 May}}. "
          "I've removed it and credited the account, [[P|Charity]]."),
    ("a", "A new {{PRODUCT|5G Home Router}} ({{SKU|HR-5G-X2}}) is on its way to [[A|21 Mossley Hill Drive, "
          "Liverpool L17 1AJ]]; please return the old one in the same box."),
    ("a", "Your assessor is [[P|Graham Boddington]]; he'll call to arrange a visit to [[A|Lot 4 Wattle "
          "Gully Road, Yackandandah VIC 3749]] within two business days."),
    ("a", "Comprehensive cover includes hail damage; third-party fire and theft doesn't. Your excess "
          "would be {{PRICE|$800}}."),
    ("a", "The school office has updated the contact e-mail for [[P|Njeri]]'s record to "
          "[[E|wambui.karanja@example.co.ke]]. Newsletters will go there from {{DATE|next week}}."),
    ("a", "Use the date on your passport, [[DOB|11/08/2003]]; we'll ask the exam board to correct the "
          "transcript."),
    ("a", "Your {{DRUG|sertraline}} refill is ready to collect from {{DATE|Thursday}} after 2pm, "
          "[[P|Iris]]. Please bring photo ID."),
    ("a", "{{DRUG|Ventolin}} refills are allowed every 21 days; yours becomes due on {{DATE|Monday}}. If "
          "you're struggling before then, please call {{NUM|111}}."),
    ("a", "I've passed your message to Mr. [[P|Kowalewski]]. He'll be at flat 2 on {{DATE|Friday}} "
          "between 9 and 12 and will text [[T|07700 900 652]] when he's on his way."),
    ("a", "The lease is the binding document, so pay the deposit to [[IBAN|GB?? NWBK 6071 8812 0043 56]] "
          "and ask the landlord in writing about the other account."),
    ("a", "The {{ORG|DPD}} depot has the full address now: [[A|Rosenthaler Str. 40-41, Hinterhaus, 3. OG, "
          "10178 Berlin]]. Redelivery is booked for {{DATE|Wednesday}}."),
    ("a", "Fixed - booking {{ID|HB-8812047}} now lists [[P|Kwabena Asante]] and one child, [[P|Yaw "
          "Asante]]. The rate doesn't change."),
    ("a", "The {{PRICE|€180}} is a pre-authorisation, not a charge. It should drop off your card within "
          "seven days of checkout."),
    ("a", "Sorry, [[P|Lance]] - the overtime for {{DATE|weeks 22-24}} was keyed against the wrong cost "
          "centre. It will be paid in the {{DATE|June}} run."),
    ("a", "For a small claim you can serve Mr [[P|Sato-Whitmore]] at his business address. The filing fee "
          "is {{PRICE|$75}} and hearings are usually set within 60 days."),
    ("a", "Done - your monthly gift is now {{PRICE|£25}} from {{DATE|1 August}}. Thank you for your "
          "{{WORD|patience}}, [[P|Patience]]!"),
    ("a", "We're so sorry. We've removed [[P|Ottilie Brandauer]] from all mailings; nothing more will go "
          "to [[A|Hauptplatz 7, 8010 Graz]]."),
    ("a", "Your membership is frozen from today for up to 8 weeks, [[P|Sky]]. The {{PRODUCT|Off-Peak}} "
          "fee resumes automatically afterwards."),
    ("a", "You're both rebooked on {{ID|KL 1010}} at 19:35: [[P|Meron Haile]] in 23C and you in 23D. "
          "Booking reference {{ID|X4TQ9B}} is unchanged."),
    ("a", "I've texted the new boarding pass to [[T|(928) 555-0126]], Ms. [[P|Begay]]. Your bag is "
          "tagged through to {{LOC|Phoenix}}."),
    ("a", "The reading was estimated because the meter at [[A|Flat 5, 9 Tithebarn Street, Preston PR1 "
          "1HX]] couldn't be accessed. Submit a reading in the app and we'll reissue the bill."),
    ("a", "Both names are now on the water account: [[P|River Castellanos]] and [[P|Autumn Fairclough]]. "
          "Each "
          "of you will get a copy of the bill."),
    ("a", "I've revoked that token and issued a new one. The comment is deleted, but assume anything "
          "public for even a minute was copied."),
    ("a", "No - [[IP|100.64.12.9]] is a carrier-grade NAT address, not one of ours. Our egress ranges are "
          "listed on the {{PRODUCT|Status}} page."),
    ("a", "A transportadora devolveu a encomenda porque faltava o andar. Vamos reenviar para [[A|Rua do "
          "Almada 412, 4.º Esq., 4050-037 Porto, Portugal]], [[P|Rafaela]]."),
    ("a", "Hemos desbloqueado la tarjeta terminada en {{NUM|3143}}; intente de nuevo la reserva, "
          "[[P|Wayra]]."),
    ("a", "I've added a note for the driver: rural number 1422 is on the gatepost, and to call "
          "[[P|Tama]] on [[T|+64 27 555 0193]] if lost."),
    ("a", "The refund of the conversion fee ({{PRICE|€4.12}}) will appear on the card ending "
          "{{NUM|0274}} within 5 working days, [[P|Guðrún]]."),
    ("a", "Payroll confirms the {{DATE|June}} salary went to the old account. They'll recall it and pay "
          "[[P|Dilani]]'s new account by {{DATE|Friday}}."),
    ("a", "I've sent a reset link to [[E|b.szabo@example.hu]]. [[P|Bence]] will need to click it within "
          "24 hours."),
    ("a", "Use your SSN on the application; an ITIN is only for people without one. Never send it by "
          "e-mail - the form is encrypted."),
    ("a", "The drop-in fee includes a mat and a towel. Classes run {{DATE|Tuesdays}} and "
          "{{DATE|Thursdays}} at 6pm."),
    ("a", "Security has reset the padlock on unit {{ID|B-114}}. The new code was sent to the number on "
          "file, [[P|Jade]]."),
    ("a", "Die Kaution über {{PRICE|1.350 €}} wurde heute an Frau [[P|Schmitt]] überwiesen."),
    ("a", "The filing was rejected because the exhibit exceeded 25 MB. Please split it and resubmit under "
          "{{ID|CV-2025-001874}}; confirmation will go to [[E|noa.bd@example.co.il]]."),
    ("a", "According to the porting KB, a PAC is valid for {{NUM|30}} days and porting is free. "
          "[[P|Shauna]]'s port to [[T|07700 900 497]] is set for {{DATE|1 July}}."),
    ("a", "The exception report shows the business was closed. I've asked {{ORG|DPD}} to redeliver to "
          "[[P|Felicity Urquhart]] on {{DATE|Tuesday}} before noon."),
    ("a", "The compromised account belonged to [[P|Clifford Amankwah]]; we've reset it and e-mailed "
          "[[E|c.amankwah@example.gh]]. The three source IPs are blocked."),
    ("a", "According to the folio, the minibar charge of {{PRICE|¥2,400}} was for {{DATE|14 June}}. I've "
          "refunded it to the {{ORG|JCB}} card."),
    # ---------------------------------------------------------------- more documents, a question, answers
    ("d", "Registration list - {{ORG|Riverside Scouts}} ({{DATE|autumn "
          "term}})\nchild,dob,parent,parent_phone,"
          "parent_email\n[[P|Oisín Brannigan]],[[DOB|2015-03-09]],[[P|Niamh Brannigan]],[[T|+44 28 9555 "
          "0132]],"
          "[[E|niamh.brannigan@example.co.uk]]\n[[P|Zara Okonjo-Petit]],[[DOB|2014-11-27]],[[P|Hélène "
          "Petit]],"
          "[[T|07700 900 118]],[[E|helene.petit@example.fr]]\n[[P|Rocco Esposito]],[[DOB|2015-07-01]],"
          "[[P|Gianna Esposito]],[[T|+39 081 555 0129]],[[E|gianna.esposito@example.it]]"),
    ("d", "New starter form (UK)\nName: [[P|Krisztina Varga-Holt]]\nDate of birth: [[DOB|4th October 1986]]\n"
          "NI number: [[NINO|TH 71 30 58 A]]\nHome: [[A|18 Beech Grove, Hebden Bridge, West Yorkshire HX7 "
          "8AD]]\n"
          "Mobile: [[T|07700 900 364]]\nPersonal e-mail: [[E|kvarga.holt@example.com]]\nEmergency contact: "
          "[[P|Wilf Holt]] (husband), same address"),
    ("d", "Agency worker timesheet rejections: [[P|Kayode Adebisi]] ([[NINO|ZR 28 64 10 C]]) - hours "
          "unsigned; [[P|Lowri Bevan]] ([[NINO|EB 93 07 42 D]]) - wrong week; [[P|Marta Nowicka]] - no "
          "NI number on file."),
    ("d", "Patient registration ({{ORG|Lakeside Family Medicine}})\nName: [[P|Bridget Saoirse Malone]]\n"
          "DOB: [[DOB|09-23-1977]]\nSSN: [[SSN|384-57-1196]]\nAddress: [[A|311 County Road 14, Rural Route "
          "1, "
          "Walker, MN 56484]]\nCell: [[T|218.555.0187]]\nEmail: [[E|bsmalone@example.net]]\nInsurance: "
          "{{ORG|Blue Cross}} XKP 44918302"),
    ("d", "docker-compose.override.yml (pasted into issue #88 by [[P|Ravi Teja Kondapalli]]):\n"
          "  db:\n    environment:\n      POSTGRES_PASSWORD: [[KEY|v9!Kq2rTz#Lm4Wx]]\n  worker:\n"
          "    environment:\n      REDIS_URL: redis://:[[KEY|Rd7pLq2WmXz9Kt4s]]@cache:6379/0\n"
          "      SLACK_WEBHOOK: https://hooks.slack.com/services/[[KEY|T07QX2LMA/B08RZ4KPN/"
          "q7Lm2Wx9Rt4Vz8Kp1Nc3Bd6H]]"),
    ("d", "Kubernetes secret (decoded by [[P|Ingrid Sæther]] during the incident review):\n"
          "  OPENAI_API_KEY: [[KEY|sk-svcacct-Xq4mT9vL2pR7wK1zN8cB5hD3]]\n  GITHUB_APP_PRIVATE_KEY_PASS: "
          "[[KEY|m0untain-Goat-Fjord!]]\n  ADMIN_EMAIL: [[E|platform-admins@example.no]]"),
    ("q", "I bought two tickets with [[CC|3714 496353 9842?]] ({{ORG|Amex}}) and my partner's "
          "[[CC|4658 2031 7740 019?]], but only one confirmation came to [[E|lulu.fonoti@example.ws]]. Can "
          "you "
          "check? Call [[T|+685 755 0142]] if easier. - [[P|Lulu Fonoti]]"),
    ("d", "Payment batch {{ID|PB-20250619-3}} - declined items\n[[CC|4111 3387 2205 661?]] "
          "[[E|j.whitcombe@example.org]] {{PRICE|$120.00}} insufficient funds\n[[CC|5470 0912 6638 411?]] "
          "[[E|mai.phuong@example.vn]] {{PRICE|$64.50}} do not honour\n[[CC|6011 9032 4471 556?]] "
          "[[E|t.abernathy@example.com]] {{PRICE|$210.00}} expired card"),
    ("d", "SIM-swap fraud note ({{ORG|O2}} fraud team): customer [[P|Hollis Grainger]] reports his number "
          "[[T|07700 900 581]] was moved to a new SIM without consent. Request came from [[IP|81.2.69.160]] "
          "using the e-mail [[E|hollis.grainger@example.co.uk]]; callback set to [[T|+44 20 7946 0714]] (not "
          "his). His real landline: [[T|01632 960 482]]."),
    ("d", "From: [[P|Marguerite Okoye]] <[[E|m.okoye@example-law.ng]]>\nTo: "
          "[[E|intake@example-chambers.com]]\n"
          "Cc: [[E|ifeoma.okoye@example.com]]\nSubject: instructions - tenancy dispute\n\nPlease find "
          "attached the lease for [[A|Plot 22, Block C, Admiralty Way, Lekki, Lagos State, Nigeria]]. My "
          "client, [[P|Ifeoma Okoye]], can be reached on [[T|+234 809 555 0164]].\n\n[[P|Marguerite]]"),
    ("a", "I've resent the confirmation for both tickets to [[E|lulu.fonoti@example.ws]], [[P|Lulu]]. The "
          "second order was under the card ending {{NUM|0196}}."),
    ("d", "Voicemail transcript: \"Hi [[P|Marigold]], it's [[P|Doreen]] from {{ORG|Oakfield Lettings}}. The "
          "inventory for [[A|Flat 4\n112 Gloucester Road\nBristol\nBS7 8BN]] is done. Ring me on "
          "[[T|0117 496 0581]] or e-mail [[E|doreen@example-oakfield.co.uk]]. Have a {{WORD|sunny}} "
          "weekend!\""),
    ("d", "Slack export #it-help\n[[P|Bao Tran]]: my VPN password expired, can someone reset? it was "
          "[[KEY|Pho-Bo-2024!xq]]\n[[P|Mason Carrick]]: please never post passwords here. reset link sent to "
          "[[E|bao.tran@example.com]]\n[[P|Bao Tran]]: ty! call me at [[T|+84 28 5555 0173]] if needed"),
    ("d", "Charity gift-aid declaration\nDonor: [[P|Gilbert Featherstonehaugh]]\nAddress: [[A|Ty Gwyn, "
          "Llanfihangel-y-Creuddyn, Aberystwyth SY23 4LA, Wales]]\nPhone: [[T|01970 555 218]]\nDOB: "
          "[[DOB|2/12/1941]]\nNI: [[NINO|JB 50 43 17 C]]\nI am a UK taxpayer."),
]


# The fourth test split (pii-497 to pii-664), written blind after the third was merged into dev;
# read during development and merged into dev.
FOURTH_RECORDS: list[tuple[str, str]] = [
    # ---------------------------------------------------------------- questions
    ("q", "Hi, I ordered the {{PRODUCT|Dyson V15 Detect}} on {{DATE|the 3rd}} but tracking {{TRACK|TBA304918827000}} shows it went to [[A|Flat 22, Harbour Reach, 7 Quayside, Newcastle upon Tyne NE1 3DX]]. I moved out of there in {{DATE|January}}; please reroute it to [[A|46 Benwell Grove, Newcastle upon Tyne NE4 8AP]]. Thanks, [[P|Ottoline Grieves]]"),
    ("q", "hey so my order {{ID|#301-7781245-0093}} never showed up?? its under [[P|tariq bensaleh]] and the door code at [[A|apt 4c 1187 grand concourse bronx ny 10452]] is {{NUM|4471}} if the driver needs it"),
    ("q", "Can you tell me why my {{ORG|Revolut}} transfer to [[IBAN|LT?? 3250 0774 1928 3364]] bounced? The recipient is my landlord [[P|Rimantas Jankauskas]] in {{LOC|Vilnius}}."),
    ("q", "My daughter [[P|Poppy]] (DOB [[DOB|19.04.2014]]) needs a check-up before {{DATE|half term}}. Do you have anything on a {{DATE|Wednesday}} afternoon with Dr [[P|Ferreira da Costa]]? The {{WORD|poppy}} appeal stickers are still on our car, so look for those in the car park."),
    ("q", "Is the {{PRODUCT|Sage 50}} licence transferable? Our bookkeeper [[P|Sage Whitford]] set it up under her own email, [[E|sage.whitford@example.co.uk]], and she retires in {{DATE|December}}."),
    ("q", "What's the cut-off for same-day {{ORG|CHAPS}} payments? I need to send {{PRICE|£14,200}} to the solicitor for completion on {{DATE|Friday}}."),
    ("q", "i think someone used my card?? [[CC|4539 7720 1865 903?]] theres a charge from {{ORG|Bolt}} in {{LOC|Tallinn}} and ive never been to {{LOC|estonia}}. this is [[P|grace-anne o'dowd]]"),
    ("q", "Could you update the emergency contact on my file to my brother [[P|Tobias Lindqvist-Ahl]], [[T|+46 73 555 02 19]]? I'm [[P|Maja Lindqvist-Ahl]], staff no. {{ID|E40912}}."),
    ("q", "How do I add a second driver to rental {{ID|RA-77310-SE}}? It's my colleague Mr [[P|Dale Hutchings]] - he has a licence from {{LOC|New Zealand}}. The pick-up is at the {{LOC|Dale}} depot, if that matters."),
    ("q", "We're moving the office to [[A|Suite 410, 1 Rideau Street, Ottawa, ON K1N 8S7, Canada]] on {{DATE|1 September}}. Does the {{PRODUCT|Meraki MX68}} licence follow us?"),
    ("q", "I got a text from [[T|+44 7700 900 743]] saying my parcel has a {{PRICE|£1.99}} redelivery fee and asking for card details. Is that really {{ORG|Royal Mail}}?"),
    ("q", "My SSN was typed wrong on the 1099: it shows [[SSN|471-28-3390]] but mine is [[SSN|471-28-3309]]. Name [[P|Latoya Fairchild-Brown]], contractor ID {{ID|VND-22817}}."),
    ("q", "Hello, my name is [[P|Hamid Rezaei]]. I'd like to cancel the {{PRODUCT|Norton 360}} auto-renewal; it took {{PRICE|$119.99}} from my {{ORG|Discover}} card [[CC|6011 5522 7783 104?]] yesterday."),
    ("q", "can u resend the invoice to [[E|accounts@kettleandcrumb.example]]?? [[P|fern]] in our office deleted it by mistake lol"),
    ("q", "Dear Sir/Madam, I am writing on behalf of my mother, Mrs [[P|Adwoa Boateng]], who cannot use the phone. Please send all letters to [[A|Flat 7, Jubilee Court, 88 Coldharbour Lane, London SE5 9PU]] and not to her old address in {{LOC|Peckham}}."),
    ("q", "Does your {{PRODUCT|Business Saver}} account accept deposits from a {{LOC|Swiss}} account? Mine is [[IBAN|CH?? 0483 5029 1177 4406 2]] at {{ORG|UBS}}."),
    ("q", "Aloha, I'm [[P|Kalani Akana]]. I booked the {{PRODUCT|Na Pali}} snorkel tour for {{DATE|July 12}} but we'll be four, not three. My cell is [[T|(808) 555-0172]]."),
    ("q", "I need proof of address for my visa. Can the bank print a letter showing [[A|Rua Padre Chagas 79, apto 1203, Moinhos de Vento, Porto Alegre - RS, 90570-080, Brazil]]? Account holder [[P|Letícia Brandão Moura]]."),
    ("q", "The {{ORG|HMRC}} app says my National Insurance number [[NINO|HT 90 12 58 A]] doesn't match my name. I changed it from [[P|Rebecca Thorne]] to [[P|Rebecca Achebe-Thorne]] when I married. What do I do?"),
    ("q", "Can I pay my {{ORG|Transport for London}} penalty fare {{ID|PF 884 1129}} by bank transfer? It was issued at {{LOC|Stratford}} on {{DATE|the 11th}}."),
    ("q", "ok quick one - does {{WORD|storm}} damage include fences? [[P|Storm]] (my son lol) says the whole back fence at [[A|19 Kaka Street, Raglan 3225]] blew down last night"),
    ("q", "Bitte schicken Sie die Rechnung an [[A|Postfach 11 03 27, 20403 Hamburg]], z. Hd. Herrn [[P|Falk Vogelsberg]] ({{ORG|Kanzlei Lemke & Partner}})."),
    ("q", "My broadband installer never came. Appointment {{ID|APT-55120-B}} at [[A|Unit 3, 14 Moray Place, Dunedin 9016]], contact [[P|Hemi Walker]] [[T|+64 3 555 0148]]. Who do I chase?"),
    ("q", "hey is it normal that the {{PRODUCT|Ring}} doorbell app shows logins from [[IP|203.0.113.19]]? im in {{LOC|Leeds}}, not wherever that is. acct is [[E|mo.farouk92@example.com]]"),
    ("q", "We're applying for a joint mortgage. Me: [[P|Aleksander Bergstrøm]], born [[DOB|30 Nov 1988]]; my partner [[P|Inés Carrasco]], born [[DOB|7 February 1990]]. Do you need both payslips for the last three months?"),
    ("q", "Is {{DRUG|amoxicillin}} safe with {{DRUG|warfarin}}? My dad's appointment at the {{ORG|Anticoagulation Clinic}} isn't until {{DATE|next Tuesday}}."),
    ("q", "I'd like my pension transfer paid to [[IBAN|NL?? RABO 0331 7425 90]] - my Dutch account, now that I live in {{LOC|Utrecht}}. Scheme member {{ID|PN-4410823}}, [[P|Gordon Ketteridge]]."),
    ("q", "my nan [[P|edna]] cant log into her {{PRODUCT|NHS App}}, her phone is [[T|07700 900 289]] and her dob is [[DOB|2/6/39]] can u help"),
    ("q", "The {{ORG|Hertz}} desk at {{LOC|Dublin Airport}} charged [[CC|5425 2334 3010 910?]] twice for the same {{PRODUCT|Skoda Octavia}}. Booking is under [[P|Cormac Ó Duinn]]."),
    ("q", "How long does KYC take? I uploaded my passport and a utility bill for [[A|Flat 5B, 23 Caine Road, Mid-Levels, Hong Kong]] on {{DATE|Monday}} and it still says 'pending'."),
    ("q", "Hi! Can we move the vaccination for our dog {{WORD|Biscuit}} to {{DATE|Saturday}}? Owner is [[P|Priscila Andrade]], [[T|+1 617 555 0154]]."),
    ("q", "Where do I send the signed lease? The letting agent said Mr. [[P|Dimitrov]] wants it posted to [[A|ul. Vitosha 15, et. 3, ap. 8, 1000 Sofia, Bulgaria]]."),
    ("q", "is the {{PRODUCT|PS5 Slim}} back in stock at the {{LOC|Cribbs Causeway}} store? my mate [[P|jonno]] said he saw one"),
    ("q", "Please close my late husband's account. He was [[P|Harold Pennywhistle]], date of birth [[DOB|12 December 1944]], account {{ID|88201457}}. I have the death certificate."),
    ("q", "Can I use {{ORG|PayPal}} instead? My card [[CC|3566 0020 2036 058?]] is a {{ORG|JCB}} and your checkout rejects it. - [[P|Sato Haruka]]"),
    ("q", "Our new hire [[P|Nikhil Varghese]] can't get into {{PRODUCT|Okta}}. His work email is [[E|nikhil.varghese@brightwater-example.io]] and his manager is [[P|Robyn Castellino]]. Start date was {{DATE|Monday}}."),
    ("q", "Is there a {{PRICE|$25}} fee for replacing an {{ORG|EBT}} card in {{LOC|Ohio}}?"),
    ("q", "What documents do I need to register my baby? Born [[DOB|14 March 2026]] at {{ORG|St Mary's}}, name [[P|Orla Brennan-Kaye]]. We live at [[A|3 Linnet Close, Swindon SN3 6DZ]]."),
    ("q", "Good morning, [[P|Rocky]] here from {{ORG|Rocky Mountain Outfitters}}. Our {{ORG|UPS}} account [[E|shipping@rmo-example.com]] isn't getting pickup confirmations."),
    ("q", "i sent {{PRICE|€600}} to [[IBAN|PT?? 0035 0651 0000 7729 4091 3]] for the apartment in {{LOC|Lagos}} ({{LOC|portugal}} lol not {{LOC|nigeria}}) and the host [[P|Duarte]] says nothing arrived"),
    ("q", "My husband [[P|Ray Okonedo]] and I want separate logins for the joint account. His email is [[E|ray.okonedo@example.net]] and his mobile [[T|+234 812 555 0419]]."),
    ("q", "Please can you delete the recording of my call on {{DATE|3 October}}? I read out my card number [[CC|4716 3305 9912 784?]] and the CVV by mistake."),
    ("q", "Hi, this is Dr. [[P|Anjali Krishnamurthy]] from {{ORG|Eastgate Medical}}. Please fax the MRI report for patient [[P|Tomasz Baran]], DOB [[DOB|1967-08-23]], to our office."),
    ("q", "Hello, [[P|Wren]] here. I ordered the {{PRODUCT|Wren Feeder Pro}} ({{SKU|GF-WFP-02}}) and got a squirrel baffle instead. Can you ship the right one to [[A|Pinecrest Farm, 2280 Old Stage Road, Floyd, VA 24091]]?"),
    ("q", "Can our {{PRODUCT|GitLab}} runner at [[IP|198.51.100.87]] be added to your allowlist? Ops contact is [[P|Björk Hallsdóttir]]."),
    ("q", "I'm a UK contractor. My umbrella company has NI number [[NINO|JX 73 40 26 B]] for me, but my P60 says [[NINO|JX734062B]]. Which one is right? - [[P|Chidi Nwankwo-Lewis]]"),
    ("q", "What are your opening hours on {{DATE|Boxing Day}} at the {{LOC|Bullring}} branch?"),
    ("q", "Hi team, could you add [[P|Holly]] and [[P|Glen]] from our {{LOC|Aberdeen}} site to the {{PRODUCT|Teams}} channel? Their emails are [[E|holly.mcrae@northsea-example.co.uk]] and [[E|glen.baird@northsea-example.co.uk]]."),
    ("q", "yo whats the wifi pw for the 3rd floor meeting rooms, is it still [[KEY|Seagull-Harbour-88]]? asking for [[P|marcus]]"),
    ("q", "My SSN is [[SSN|503 66 1842]] - is that all you need to reissue my {{ORG|IRS}} identity PIN? Best number is [[T|617-555-0198]]."),
    ("q", "Does the {{PRODUCT|Honey}} browser extension work with your checkout? My colleague [[P|Honey Castellanos-Pike]] says it applied a {{PRICE|$40}} code."),
    ("q", "Why did my {{ORG|Monoprix}} delivery go to [[A|8 rue Oberkampf, 75011 Paris]]? I asked for [[A|Bâtiment C, 3e étage, 27 boulevard Voltaire, 75011 Paris, France]]. Commande {{ID|MX-448120}}, au nom de [[P|Yasmine Bouzid]]."),
    ("q", "pls put the remaining {{PRICE|$212}} for the cabin on my other card [[CC|529014778203316?]] exp {{DATE|09/29}}, the first one maxed out lol. booking {{ID|CBN-4471}} under [[P|deshawna]]"),
    # ---------------------------------------------------------------- documents: tool results, CRM, letters, logs
    ('d', 'tool_result get_order(order_id="{{ID|ORD-2026-448120}}"):\n{"status": "delivered", "customer": {"name": "[[P|Marguerite Lindahl]]", "email": "[[E|m.lindahl@example.se]]", "phone": "[[T|+46 8 555 213 44]]"}, "shipping_address": "[[A|Sveavägen 112, lgh 1103, 113 50 Stockholm, Sweden]]", "items": [{"sku": "{{SKU|LMP-ARC-BLK}}", "qty": 1, "price": "{{PRICE|SEK 1 495}}"}], "tracking": "{{TRACK|00340434161094032585}}"}'),
    ("d", "CRM > Contact\nFull name: [[P|Obiageli Nwachukwu-Pratt]]\nPreferred name: [[P|Obi]]\nMobile: [[T|+234 803 555 0917]]\nWork: [[T|+44 20 7946 0382]]\nEmail: [[E|obi.pratt@example.ng]]\nHome: [[A|14B Bourdillon Road, Ikoyi, Lagos 106104, Nigeria]]\nSegment: {{PRODUCT|Private Banking}}\nRelationship manager: [[P|Giles Hatherley]]\nLast contact: {{DATE|2026-10-30}}"),
    ("d", "SHIP TO:\n[[P|KATARINA NOVAKOVIĆ]]\n[[A|ILICA 242\n10000 ZAGREB\nCROATIA]]\nTEL [[T|+385 1 555 0193]]\nREF {{ID|HR-9982-33}}   WT {{NUM|2.4}} KG\n{{TRACK|RR448120913HR}}"),
    ("d", "From: [[P|Beatrice Fontaine-Mills]] <[[E|b.fontaine-mills@example.fr]]>\nSent: {{DATE|Tuesday, 4 November 2026 09:12}}\nSubject: RE: Invoice {{ID|INV-77104}}\n\nHello, the invoice should be addressed to our {{LOC|Lyon}} office, not {{LOC|Paris}}.\n\n> On {{DATE|3 Nov}}, [[P|Kenta Mori]] wrote:\n> Could you confirm the billing entity?\n\nKind regards,\n[[P|Beatrice Fontaine-Mills]]\nHead of Finance, {{ORG|Atelier Lumen SAS}}\n[[A|14 quai Saint-Antoine, 69002 Lyon, France]]\nT. [[T|+33 4 78 55 50 21]] | M. [[T|+33 6 55 50 44 19]]"),
    ("d", "Call transcript {{ID|CC-20261104-0147}} ({{ORG|Meridian Insurance}})\nAgent: Thanks for calling, you're through to [[P|Shona]]. Can I take your name?\nCaller: Yeah it's [[P|Terrence Blackwood-Ogun]].\nAgent: And the first line of the address?\nCaller: [[A|Flat 2, 31 Hamilton Road, Motherwell ML1 3BY]].\nAgent: And your date of birth?\nCaller: [[DOB|ninth of May, nineteen eighty-two]].\nAgent: Lovely. And a number we can reach you on?\nCaller: [[T|oh seven seven double-oh, nine hundred, three one six]]."),
    ("d", "WhatsApp export (support line)\n[21:04] [[P|kezia]]: hiya the engineer never came AGAIN\n[21:04] [[P|kezia]]: its [[A|56 ravenscroft rd, beckenham br3 4tr]]\n[21:06] Agent [[P|Dominic]]: Sorry [[P|Kezia]], I can see the {{DATE|8-12}} slot was missed. I've rebooked for {{DATE|tomorrow}} and flagged it as a priority.\n[21:07] [[P|kezia]]: k thx"),
    ("d", "INVOICE {{ID|INV-2026-0419}}\nFrom: [[P|Mateo Ruiz-Calderón]] (freelance translator)\n[[A|Carrer de Verdi 41, 2n 1a, 08012 Barcelona]]\nTo: {{ORG|Polyglot Media GmbH}}, PO {{ID|PM-PO-5521}}\nAmount: {{PRICE|€1,840.00}}\nPay to: [[IBAN|ES?? 0182 2370 4201 0845 9216]] ({{ORG|BBVA}})\nDue: {{DATE|30 November 2026}}"),
    ("d", "KYC result (webhook) for applicant {{ID|app_7Hq2LmX9}}\nname_on_document: [[P|Yerlan Abenov]]\ndob: [[DOB|1993-01-28]]\ndocument_type: passport\naddress_check: [[A|Dostyk Ave 97, apt 41, Almaty 050051, Kazakhstan]] - MATCH\nsanctions: clear\nip_at_upload: [[IP|198.51.100.142]]"),
    ("d", "{{ORG|Northbridge Building Society}}\nMr [[P|Leonard Quartey]]\n[[A|Flat 11\nAlbion Mills\n19 Water Lane\nLeeds\nLS11 5QN]]\n\n{{DATE|7 November 2026}}\n\nDear Mr [[P|Quartey]],\nYour fixed rate ends on {{DATE|31 January 2027}}. If you do nothing, you will move to our {{PRODUCT|Standard Variable Rate}} of {{NUM|7.49}}%."),
    ("d", "Appointment confirmation\nPatient: [[P|Soraya Benali]]\nDOB: [[DOB|04/07/1979]]\nClinic: {{ORG|Rheumatology Outpatients}}, Block C\nWhen: {{DATE|Thu 20 Nov, 10:40}}\nPlease bring your {{DRUG|methotrexate}} dosing diary. To rearrange, call [[T|0121 496 0927]]."),
    ("d", "HR case {{ID|HR-2026-311}} - grievance\nRaised by: [[P|Ngozi Adebanjo]] (employee {{ID|44218}})\nAgainst: line manager [[P|Craig Dunmore]]\nWitness: [[P|Fiona]] (reception)\nNI: [[NINO|KA 51 88 03 C]]\nSummary: alleges overtime was refused after she reported the {{PRODUCT|Rota+}} scheduling error. Meeting set for {{DATE|18 Nov}}."),
    ("d", "Ticket {{ID|IT-88412}} - VPN drops\nUser: [[P|Mehmet Kaya]] <[[E|mehmet.kaya@example.com.tr]]>\nLog:\n2026-11-05T08:14:22Z ovpn[2231]: [[IP|10.40.7.112]] TLS handshake failed (peer [[IP|203.0.113.240]]:1194)\n2026-11-05T08:14:25Z ovpn[2231]: {{VER|OpenVPN 2.6.8}} reconnecting\nLaptop: {{PRODUCT|ThinkPad T14}}, asset {{ID|LT-01942}}"),
    ("d", "config/settings.py (pasted by [[P|Lior Ben-Haim]] in #backend):\nDATABASES = {'default': {'HOST': '[[IP|10.0.12.5]]', 'USER': 'orders_rw', 'PASSWORD': '[[KEY|v8Rq!2mLxT7zWc]]'},\n}\nSTRIPE_SECRET_KEY = '[[KEY|sk_live_51MzQp7Lk2RtYv9XwB4nC8dE0]]'\nDEBUG = False"),
    ("d", ".env (from support bundle {{ID|SB-5521}})\nOPENAI_API_KEY=[[KEY|sk-proj-Lm4Tq9Zx2Vw7Rk1Nc8Bp3Hd6Ys0Fe5Gj]]\nANTHROPIC_API_KEY=[[KEY|sk-ant-api03-Qm7Lx2Rt9Vw4Kp8Zn1Yc5Hb3Fd6Js0Ge-AAA]]\nHF_TOKEN=[[KEY|hf_TqLm9Rx2VwK7pZ4nB8cY1dH5sJ3fG6aE0u]]\nLOG_LEVEL=info\nPORT={{NUM|8080}}"),
    ("d", "celery worker crash ({{DATE|2026-11-06 02:14}}): kombu.exceptions.OperationalError: cannot connect to amqp://jobs:[[KEY|Qx7#pLm2Rt9v]]@[[IP|192.0.2.51]]:5672// - retrying in {{NUM|32}}s"),
    ("d", "Repro steps from [[P|Anaïs Girard]]:\ncurl -H 'Authorization: Bearer [[KEY|eyJhbGciOiJSUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJ1XzQ0MTIiLCJleHAiOjE3NjQ1fQ.Zk2mQx9Lr7Tv4Wn1Bc8Yp3Hd6Fs0Ge]]' https://api.example.com/v3/accounts/{{ID|acct_8812}}\nReturns 500 since {{VER|v3.2.1}}."),
    ("d", "CI log (job {{ID|#48812}}, {{PRODUCT|GitHub Actions}}):\n+ git clone https://x-access-token:[[KEY|github_pat_11AJ7QZ2Y0kLm9RtX4vW8n_Pq2Zs7Tb3Ud6Wf1Yh9Kc5Ln0Mx4]]@github.com/acme/infra.git\nCloning into 'infra'...\nNote: token printed because set -x was on; reported by [[P|Sunniva Eide]]."),
    ("d", "terraform.tfvars (PR #2031, flagged by secret scanning)\nslack_bot_token = \"[[KEY|xoxb-7731-40912-Lm2Qx9RtV4wK8pZn]]\"\ndatadog_api_key = \"[[KEY|3f9b2e7c1a8d4f60b5e29c7a1d3f8e42]]\"\nregion = \"{{LOC|eu-west-2}}\"\nowner = \"[[E|platform@acme-example.dev]]\""),
    ("d", "DM\n[[P|yusuf]]: hey [[P|nadia]] the bot token is [[KEY|7261849305:AAFq2LmT9xVw4Rk8Zn1Yc5Hb3Fd6Js0GeU]] dont share it pls\n[[P|nadia]]: got it, putting it in the vault now"),
    ("d", "nginx access.log excerpt\n[[IP|198.51.100.201]] - - [{{DATE|05/Nov/2026:10:14:09 +0000}}] \"POST /login HTTP/1.1\" 401 512\n[[IP|198.51.100.201]] - - [{{DATE|05/Nov/2026:10:14:11 +0000}}] \"POST /login HTTP/1.1\" 401 512\n[[IP|2001:db8:4f2a::17]] - - [{{DATE|05/Nov/2026:10:15:40 +0000}}] \"GET /reset?email=[[E|t.hollis@example.org]] HTTP/1.1\" 200 1840"),
    ("d", "Sentry event {{ID|8f21c9}}: TypeError in checkout {{VER|4.12.0}}\nuser: {id: {{ID|u_55812}}, email: [[E|lin.zhao@example.cn]], ip_address: [[IP|2001:db8:cafe:12::5]]}\nbreadcrumb: card [[CC|4024 0071 4913 552?]] submitted to /pay"),
    ("d", "Device enrolled ({{PRODUCT|Intune}}): {{PRODUCT|iPhone 16}} serial {{ID|F2LXK9QZ1M}}, user [[P|Oyinkansola Bakare]], phone [[T|+234 809 555 0461]], last IP [[IP|192.0.2.203]]."),
    ("d", "{{ORG|1Password}} share (expired): 'Router admin' - username admin, password [[KEY|Limpet$Barnacle-61]], shared by [[P|Hugo Marchetti-Vance]] with [[P|Ffion]]."),
    ("d", "appsettings.Production.json\n\"Storage\": \"DefaultEndpointsProtocol=https;AccountName=acmeinvoices;AccountKey=[[KEY|Xk7pQ2mL9vR4tW8nZ1yB5cH3dF6sJ0gEaUoIiTq7Lw==]];EndpointSuffix=core.windows.net\""),
    ("d", "Seller dispute {{ID|DSP-40218}} ({{ORG|Etsy}})\nBuyer: [[P|Magnolia Pruitt]], [[A|418 Cypress Bend Rd, Natchez, MS 39120]]\nSeller: [[P|Teodora Ilieva]] ({{ORG|TeoCeramics}})\nItem: hand-thrown mug set, {{PRICE|$86}}, glaze '{{WORD|Magnolia}}'\nBuyer says it arrived broken; seller asks for photos."),
    ("d", "Patient: {{WORD|Mochi}} (cat, 4y)\nOwner: [[P|Haruka Ishikawa]]\nPhone: [[T|+81 90-5555-0148]]\nAddress: [[A|2-11-4 Nakameguro, Meguro-ku, Tokyo 153-0061]]\nVaccines due {{DATE|12/2026}}."),
    ("d", "Removal quote {{ID|Q-33018}}\nFrom: [[A|Flat 1, 4 Marine Parade, Dover CT16 1LW]]\nTo: [[A|La Grange, 7 chemin des Vignes, 24220 Saint-Cyprien, France]]\nClients: [[P|Nigel]] and [[P|Pauline Ashbury]]\nVolume: {{NUM|850}} cu ft\nPrice: {{PRICE|£3,940}} incl. crossing"),
    ("d", "Site survey ({{ORG|SunHarvest Solar}}): [[P|Wilhelmina de Groot]], [[A|Boerderij De Hoeve, Kerkweg 3, 7245 PV Laren (Gld), Nederland]]; roof {{NUM|38}}° south, {{NUM|14}} panels, {{PRODUCT|SolarEdge SE5000H}} inverter. Contact [[T|+31 6 5555 0917]]."),
    ("d", "Candidate pipeline - {{ID|REQ-1182}} (Data Engineer)\n1. [[P|Olamide Ajayi]] - [[E|olamide.ajayi@example.com]] - [[T|+44 7700 900 907]] - strong {{PRODUCT|Spark}}\n2. [[P|Przemysław Dąbrowski]] - [[E|p.dabrowski@example.pl]] - [[T|+48 512 555 338]]\n3. [[P|Noble Asamoah]] - referred by [[P|Temitope]]; a {{WORD|noble}} effort on the take-home"),
    ("d", "Background check summary ({{ORG|Sterling}})\nSubject: [[P|Justin Okereke-Walsh]]\nSSN: [[SSN|219-07-5563]]\nDOB: [[DOB|08/15/1991]]\nAddresses (7 yrs): [[A|2210 E Colfax Ave, Apt 5, Denver, CO 80206]]; [[A|PO Box 18821, Boulder, CO 80308]]\nCriminal: none found"),
    ("d", "Withdrawal review ({{ORG|Kraken}}): user [[E|alexei.volkov@example.com]] requested {{PRICE|0.42 BTC}} to an external wallet from a new IP, [[IP|203.0.113.88]]. Name on account [[P|Alexei Volkov]], DOB [[DOB|17/03/1985]], phone [[T|+357 99 555 014]]. Hold 24 h."),
    ("d", "{{ORG|Student Loans Company}}\nCustomer reference {{ID|SLC 3318 4402 17}}\nMs [[P|Tegan Maddox]]\n[[A|12 Heol y Nant\nPontypridd\nCF37 4DB]]\nYour repayment threshold for {{DATE|2026/27}} is {{PRICE|£28,470}}."),
    ("d", "Client intake - Skilled Worker visa\nName: [[P|Rahim Uddin Chowdhury]]\nDOB: [[DOB|21-Jan-1994]]\nCurrent address: [[A|House 44, Road 11, Block F, Banani, Dhaka 1213, Bangladesh]]\nSponsor: {{ORG|Pennine Care NHS Trust}}\nPhone: [[T|+880 1711 555 019]]"),
    ("d", "Booking confirmation - {{ORG|Hartwell Barn}}\nCouple: [[P|Fern Castlemaine]] & [[P|Idris Vaughan]]\nDate: {{DATE|Saturday 19 June 2027}}\nDeposit {{PRICE|£2,500}} paid by [[CC|5392 7710 4433 218?]]\nTable flowers: {{WORD|fern}} and eucalyptus\nCorrespondence: [[E|fernandidris2027@example.co.uk]]"),
    ("d", "Ticket transfer log ({{ORG|Dice}})\n{{DATE|02 Nov}} 19:22 [[P|Kofi Ampofo]] -> [[P|Abena]] ({{ID|tkt 55120-A}})\n{{DATE|02 Nov}} 19:40 [[P|Abena]] -> [[E|zola.m@example.co.za]] ({{ID|tkt 55120-A}})"),
    ("d", "Library overdue notice\n[[P|Eustace Pilkington]], card {{ID|23019004471821}}\n{{PRODUCT|The Overstory}} - due {{DATE|28 Oct}}\nPlease return it to the {{LOC|Hebden Road}} branch or call [[T|01422 555 019]]."),
    ("d", "PCN appeal {{ID|WM44182093}}\nVehicle LK19 XRT\nAppellant: [[P|Marsha Cunliffe]]\nAddress: [[A|9 Verbena Walk, Northampton NN3 8SL]]\nGrounds: the sign was hidden behind an overgrown {{WORD|holly}} bush on {{DATE|14 October}}."),
    ("d", "Council tax single person discount review: [[P|Iolanthe Batty]], [[A|27 Weaver Street, Winsford CW7 4AA]]. Another adult, [[P|Shane Corrigan]], has been registered to vote at the address since {{DATE|May 2026}}."),
    ("d", "SMS log ({{ORG|BrightSmile Dental}})\nTo [[T|07700 900 614]]: Hi [[P|Violet]], your check-up with Dr [[P|Nakamura-Reid]] is on {{DATE|Mon 24 Nov}} at 15:10. Reply C to confirm.\nTo [[T|07700 900 615]]: Hi [[P|Bartek]], your hygienist visit is on {{DATE|Tue 25 Nov}}. Reply C to confirm.\nFrom [[T|07700 900 614]]: C. also can u do the {{WORD|violet}} toothbrush again"),
    ("d", "Damage report - {{ORG|Sixt}} {{LOC|Munich Airport}}\nRenter: [[P|Yusra Haddadin]]\nLicence country: {{LOC|Jordan}}\nCard on file: [[CC|4263 9826 4026 920?]]\nDamage: scratch on rear bumper, {{PRICE|€340}}\nRenter phone: [[T|+962 79 555 0137]]"),
    ("d", "Lost item report: rider [[P|Cash Delacourt]] left a {{PRODUCT|Kindle Paperwhite}} in a {{PRODUCT|Toyota Prius}} (driver [[P|Anwar]]). Trip {{ID|TRP-9912-KX}} ended at [[A|1550 Mission St, San Francisco, CA 94103]]. Rider number [[T|(415) 555-0164]]. Return fee {{PRICE|$15}}, to be paid in {{WORD|cash}} to the driver."),
    ("d", "Berth licence renewal, berth {{ID|P-14}}\nLicensee: [[P|Morwenna Tregear]]\nAddress: [[A|Chy an Mor, Polkerris, Par, Cornwall PL24 2TL]]\nVessel: {{PRODUCT|Westerly Konsort}}\nFee: {{PRICE|£2,184}}\nRefund of last year's overpayment to: [[IBAN|GB?? MIDL 4005 1582 7711 09]]"),
    ("d", "Funeral arrangement (confidential)\nDeceased: [[P|Archibald Mountjoy]], born [[DOB|3 April 1936]]\nNext of kin: [[P|Hester Mountjoy]] (daughter), [[T|01632 960 715]]\nService at {{ORG|St Bride's}}, {{DATE|Thursday 27 November}}, 11:00"),
    ("d", "Transfer request {{ID|TR-55201}}\nMember: [[P|Gwilym Pryce]]\nNI: [[NINO|ML 26 47 91 A]]\nDOB: [[DOB|16 Sept 1962]]\nReceiving scheme: {{ORG|Aviva}}\nValue: {{PRICE|£184,220.17}}"),
    ("d", "payroll_{{DATE|2026-10}}.csv\nemp_id,name,ni,iban\n{{ID|1104}},[[P|Hollie Mbeki]],[[NINO|PE845920B]],[[IBAN|GB??BARC20003512774419]]\n{{ID|1105}},[[P|Stanisław Kowal]],[[NINO|RW176348C]],[[IBAN|GB??NWBK60020144881906]]\n{{ID|1106}},[[P|Dennis Major]],[[NINO|NP310672D]],[[IBAN|GB??HBUK40127633018825]]"),
    ("d", "Form W-2 (copy B) extract\nEmployee: [[P|Consuela Marrero]]\nSSN: [[SSN|648-20-9917]]\nAddress: [[A|Calle Loíza 3401, Apt 7B, San Juan, PR 00911]]\nWages: {{PRICE|$52,118.40}}"),
    ("d", "Claim {{ID|AUTO-448120}} first notice of loss\nInsured: [[P|Bobby Ray Tillman]], [[A|Rt. 2 Box 47, Hazard, KY 41701]]\nPhone: [[T|606.555.0123]]\nOther driver: [[P|Crystal Dunaway]] ({{ORG|State Farm}}), [[T|606.555.0181]]\nDamage: front quarter panel, {{PRODUCT|Ford F-150}}; it was icy, not a {{WORD|crystal}} clear night."),
    ("d", "Kontoauszug {{DATE|10/2026}}\n{{DATE|03.10.}} Gutschrift [[P|Lena Hartkopf]] [[IBAN|DE?? 2107 0020 0912 4471 58]] Miete Okt {{PRICE|850,00 €}}\n{{DATE|05.10.}} Lastschrift {{ORG|Stadtwerke Kassel}} {{PRICE|-112,40 €}}"),
    ("d", "{{ORG|Banque Populaire}}\nMadame [[P|Sylvie Marchetti-Roux]]\n[[A|Résidence Les Tilleuls, Bât. B, 12 allée des Peupliers, 31400 Toulouse]]\nObjet : clôture du compte [[IBAN|FR?? 3000 4028 3798 7654 3210 943]]\nMadame, nous accusons réception de votre demande du {{DATE|2 novembre}}."),
    ("d", "Gentile [[P|Alessio Ferrante]], la consegna presso [[A|Via dei Mille 24, int. 6, 80121 Napoli NA]] è prevista per {{DATE|giovedì}}. Per info: [[T|+39 081 555 7732]]. Il rimborso andrà su [[IBAN|IT??Q0306909420100000017843]]."),
    ("d", "Agent: For security, can you verify the last four of your social?\nCaller: Sure, the whole thing is [[SSN|381-54-2206]].\nAgent: Just the last four is fine, ma'am. And your name?\nCaller: [[P|Loretta Pickens]].\nAgent: Thank you, Mrs. [[P|Pickens]]. I see the {{PRODUCT|Medicare Advantage}} plan starting {{DATE|January 1}}."),
    ("d", "Intercom chat\n[[P|jaz]]: hiii my accnt got locked after i changed email to [[E|jazmin.r.okafor@example.com]] ??\nBot: Sorry to hear that! A human will be with you shortly.\n[[P|jaz]]: ya and my number [[T|07700900 836]] doesnt get the code either\nAgent [[P|Ted]]: hi [[P|Jazmin]], resetting now"),
    ("d", "Propane delivery route ({{DATE|Tue}})\n1. [[P|Verna Haskell]] - [[A|4471 County Road 9, Eagle Butte, SD 57625]] - tank {{NUM|500}} gal\n2. [[P|Amos Yoder]] - [[A|PO Box 86, Kidron, OH 44636]] - gate on left, no phone\n3. [[P|Lavern Sixkiller]] - [[A|Route 1 Box 212, Tahlequah, OK 74464]] - [[T|918-555-0133]]"),
    ("d", "Customer update: [[P|Bronwyn Kealy]] moved from [[A|Unit 12/44 Ocean Street, Bondi NSW 2026]] to [[A|RMB 2240, Yarram VIC 3971]]. New mobile [[T|0491 570 156]], landline [[T|(03) 5550 4821]]."),
    ("d", "Courier booking {{ID|BLR-7781}}: pickup from [[P|Lakshmi Narayanan]], [[A|Door No. 7-1-621, Flat 302, Sai Enclave, Ameerpet, Hyderabad, Telangana 500016]], mobile [[T|+91 94400 55501]]; deliver to {{ORG|Infosys}} {{LOC|Electronic City}} gate 2."),
    ("d", "Nurse line callback list\n- [[P|Ebba Sjöberg]], DOB [[DOB|1958-11-03]], HbA1c result, [[T|+46 70 555 18 26]]\n- [[P|Fergus Lennox]] ({{ID|MRN 0042817}}), {{DRUG|apixaban}} dosing query\n- [[P|Ginger]] (parent [[P|Rosheen Tully]]), {{DRUG|Calpol}} dose for a 3-year-old; mum also asked whether {{WORD|ginger}} tea is OK"),
    ("d", "Ansible inventory (hosts.ini) pasted in ticket {{ID|OPS-1187}}\n[web]\nweb01 ansible_host=[[IP|10.31.8.14]] ansible_user=deploy ansible_password=[[KEY|Tr0ut-Lake-5512]]\nweb02 ansible_host=[[IP|10.31.8.15]] ansible_user=deploy"),
    ("d", "Bug bounty report {{ID|H1-229104}}: the production bundle main.7f21.js contains const MAPS_KEY = \"[[KEY|AIzaSyB8kW2mQ9xT4vL7pR1nZ5cH3dF6yJ0sGuE]]\"; unrestricted. Reporter: [[P|Padraig Lyons]] ([[E|plyons.sec@example.ie]])."),
    ('d', 'postman_collection.json (shared by [[E|qa.team@orbit-example.io]])\n{"key": "X-Shopify-Access-Token", "value": "[[KEY|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]]", "type": "text"}'),
    ("d", "decline_log.csv\ntime,pan,reason\n09:12,[[CC|222300312200338?]],insufficient_funds\n09:14,[[CC|3742 510012 3456?]],do_not_honour\n09:15,[[CC|675964982643802?]],expired_card\n09:17,{{ID|411111******1111}},stolen_card"),
    ("d", "Parte de entrada de viajeros\nNombre: [[P|Émilie Gagnon]]\nNacionalidad: {{LOC|Canadá}}\nFecha de nacimiento: [[DOB|22/10/1987]]\nDomicilio: [[A|4520 avenue Papineau, app. 3, Montréal (Québec) H2H 1V4, Canada]]\nTarjeta: [[CC|5200 8282 8282 821?]]"),
    ("d", "Order {{ID|CN-2026-118820}} paid with {{ORG|UnionPay}} [[CC|6221 2612 3456 789?]] by [[P|Zhou Yiming]]; ship to [[A|Room 1602, Building 3, 500 Zhangyang Road, Pudong New District, Shanghai 200120, China]], tel [[T|+86 21 5555 0178]]."),
    ("d", "Corporate card reconciliation ({{DATE|Oct}}): [[P|Ravindra Sampath]] - Diners [[CC|3056 930902 590?]] - {{PRICE|LKR 48,200}} at {{ORG|Cinnamon Grand}} {{LOC|Colombo}}; receipt missing."),
    ("d", "Benefits enrolment\nEmployee: [[P|Keiko Reyes-Tanaka]]\nDependent: [[P|Maddox Reyes-Tanaka]], SSN [[SSN|755-13-4408]], DOB [[DOB|06/30/2017]]\nPlan: {{PRODUCT|PPO Gold}} family tier, {{PRICE|$412.80}}/month"),
    ("d", "benefits_census.csv\nemployee,ssn,dob,zip\n[[P|Tyrell Gaines]],[[SSN|536281947]],[[DOB|1990-02-14]],{{NUM|30310}}\n[[P|Wendy Lao]],[[SSN|094-62-7731]],[[DOB|1985-09-09]],{{NUM|94112}}"),
    ("d", "Right-to-work check\nName: [[P|Aurelia Constantin]]\nNI number: [[NINO|SH 60 29 35 A]]\nDOB: [[DOB|11.12.1996]]\nUK address: [[A|Room 4, 17 Stanmore Road, Birmingham B16 9TA]]"),
    ("d", "Tenancy reference request\nTenant: [[P|Mustafa Yilmazer]]\nCurrent landlord: [[P|Gail Pennock]], [[T|0113 496 0418]], [[E|gail.pennock@example.co.uk]]\nProperty: [[A|Apartment 6, Canal Wharf, 12 Whitehall Road, Leeds LS12 1AP]]\nRent {{PRICE|£975}} pcm; arrears: none"),
    ("d", "Safeguarding referral (school)\nPupil: [[P|Kayden Marsh]], Year 6, DOB [[DOB|2015-05-02]]\nParent/carer: [[P|Stacey Marsh]], [[T|07700 900 389]]\nConcern raised by: Mrs [[P|Okonjo-Bright]] (class teacher)\nThe family have moved from the {{LOC|Fenland}} {{WORD|marsh}} cottages into temporary housing."),
    ("d", "Order lookup (tool): {'order': '{{ID|W-5520178}}', 'name': '[[P|Siddiq Faizi]]', 'addr': '[[A|Kabulstraße 4, 1. Stock, 4020 Linz, Österreich]]', 'tel': '[[T|+43 732 555 184]]', 'pay': 'SEPA [[IBAN|AT?? 1904 3002 3457 3201]]', 'total': '{{PRICE|€212,90}}'}"),
    ("d", "Customer 360 (read-only)\nname ........ [[P|Thandeka Mthembu]]\nid number ... (withheld)\nemail ....... [[E|thandeka.m@example.co.za]]\ncell ........ [[T|+27 72 555 0163]]\naddress ..... [[A|14 Jacaranda Lane, Waterkloof Ridge, Pretoria 0181, South Africa]]\nproducts .... {{PRODUCT|Gold Cheque}}, {{PRODUCT|Home Loan}}\nlast login .. [[IP|198.51.100.59]]"),
    ("d", "Mail merge source (row 12)\nSalutation: Dr\nFirst: [[P|Ahanu]]\nLast: [[P|Whitecloud]]\nStreet: [[A|General Delivery, Browning, MT 59417]]\nNotes: collects mail at the post office; no street delivery"),
    ("d", "Re: your complaint {{ID|CMP-99120}}\nDear Ms [[P|Lark]],\nThank you for writing to us about the {{WORD|lark}}-themed nursery set. We have refunded {{PRICE|£64.00}} to your card ending {{NUM|4471}}.\nYours sincerely,\n[[P|Rupert Haines]]\nCustomer Relations, {{ORG|Bramble & Co}}"),
    ("d", "Appointment reminder ({{ORG|Clínica Dental Sonrisa}}): [[P|Ximena Paredes Lucero]], {{DATE|martes 25}} a las 17:30. Si necesita cambiar la cita, llame al [[T|+52 33 5555 0194]] o escriba a [[E|citas@sonrisa-example.mx]]."),
    ("d", "Zendesk macro output (sent)\nHi [[P|Misty]],\nI've updated the delivery address on {{ID|#88213}} to [[A|PO Box 1123, Alice Springs NT 0871, Australia]]. The {{ORG|Australia Post}} parcel locker you mentioned only takes items under {{NUM|22}} kg.\nCheers, [[P|Brodie]]"),
    ("d", "Call note: spoke to [[P|Frost]] (Mr [[P|Alan Frost]]) re boiler cover. He says the {{WORD|frost}} protection setting was off when the pipes burst at [[A|Keeper's Cottage, Low Row, Richmond, North Yorkshire DL11 6NE]]. Callback [[T|01748 555 207]]."),
    ("d", "Support email\nFrom: [[E|bliss.okwu@example.com]]\nHi, [[P|Bliss]] here - the {{PRODUCT|Serenity}} meditation subscription renewed at {{PRICE|£59.99}} even though I cancelled on {{DATE|the 1st}}. Card [[CC|4917 4845 8989 710?]].\nSent from my iPhone"),
    ("d", "Swedish tax agency letter (scan, OCR)\n{{ORG|Skatteverket}}\n[[P|Nils-Erik Holmström]]\n[[A|Storgatan 8 B lgh 1201\n972 38 Luleå]]\nPersonnummer: (redacted)\nÅterbetalning: {{PRICE|3 412 kr}} till konto [[IBAN|SE?? 6000 0000 0004 2851 7739]]"),
    ("d", "Access review ({{DATE|Q3}}): [[P|Viktor Hrabal]] still has admin on prod; last login from [[IP|192.0.2.77]] on {{DATE|2 Sep}}. His {{ORG|AWS}} secret access key [[KEY|9dR2kLm7Qx4TvW8nZ1yB5cH3pF6sJ0gEaUoIiT7e]] was found in a notebook on the shared drive."),
    ("d", "Pharmacy delivery slip\n[[P|Agnes McGillivray]]\n[[A|Nethertown, Fair Isle, Shetland ZE2 9JU]]\n{{DRUG|Lisinopril}} 10 mg x 28\nLeave in the porch. Phone [[T|01595 555 403]] if no answer.\nDriver: [[P|Calum Morrison]]"),
    ("d", "Hotel pre-authorisation slip\nGuest: [[P|Aurelio Bianchessi]]\nCard: [[CC|4485-3021-7769-011?]] (Visa)\nAmount held: {{PRICE|CHF 300.00}}\nRoom {{NUM|512}}, {{DATE|21-23 Nov}}\nHome address: [[A|Via Nassa 5, 6900 Lugano, Svizzera]]"),
    # ---------------------------------------------------------------- answers
    ("a", "Thanks, [[P|Ottoline]]. The parcel was already delivered to the old flat, so I've opened a retrieval request with {{ORG|Evri}} and ordered a replacement to [[A|46 Benwell Grove, Newcastle upon Tyne NE4 8AP]]. You should see a new tracking number by {{DATE|tomorrow}}."),
    ("a", "The transfer to [[IBAN|LT?? 3250 0774 1928 3364]] was returned because the beneficiary name didn't match the account. Please ask Mr [[P|Jankauskas]] for the exact name his bank holds and resend."),
    ("a", "We have a slot with Dr [[P|Ferreira da Costa]] on {{DATE|Wednesday 19 November}} at 15:20 for [[P|Poppy]]. I've sent the confirmation to the number on the family record."),
    ("a", "Yes, {{PRODUCT|Sage 50}} licences can be reassigned. Once [[P|Sage]] has added a new administrator, she can remove [[E|sage.whitford@example.co.uk]] from the subscription herself."),
    ("a", "Same-day {{ORG|CHAPS}} payments must be submitted by 15:30. For {{PRICE|£14,200}} you'll also need to approve the payment in the app, so please allow a few minutes."),
    ("a", "I've blocked the card ending {{NUM|9033}} and raised a dispute for the {{ORG|Bolt}} charge. A new card will reach you in 3-5 working days, [[P|Grace-Anne]]."),
    ("a", "Done: your emergency contact is now [[P|Tobias Lindqvist-Ahl]] on [[T|+46 73 555 02 19]]. The change shows on your profile within an hour."),
    ("a", "I've added Mr [[P|Hutchings]] as a second driver on {{ID|RA-77310-SE}}. Drivers with a licence from {{LOC|New Zealand}} need to show it with their passport at pick-up; there's no extra fee."),
    ("a", "That message didn't come from {{ORG|Royal Mail}} - please don't reply or click the link. You can report the number [[T|+44 7700 900 743]] by forwarding the text to 7726."),
    ("a", "Thanks, [[P|Latoya]]. We'll issue a corrected 1099 with [[SSN|471-28-3309]] within ten business days; the incorrect copy will be voided with the {{ORG|IRS}}."),
    ("a", "Auto-renewal for {{PRODUCT|Norton 360}} is off and the {{PRICE|$119.99}} refund is on its way to the card ending {{NUM|1040}}. Mr [[P|Rezaei]], you'll get a confirmation e-mail shortly."),
    ("a", "I've updated the correspondence address for Mrs [[P|Boateng]] to [[A|Flat 7, Jubilee Court, 88 Coldharbour Lane, London SE5 9PU]]. We'll also note that she prefers letters to phone calls."),
    ("a", "Yes - transfers in from [[IBAN|CH?? 0483 5029 1177 4406 2]] are accepted; they arrive as SWIFT payments, so allow two working days and a possible {{PRICE|£5}} receiving fee."),
    ("a", "You're booked for four on the {{PRODUCT|Na Pali}} tour on {{DATE|July 12}}, [[P|Kalani]]. The extra seat is {{PRICE|$149}}; we'll text [[T|(808) 555-0172]] the day before with the check-in time."),
    ("a", "Please ask {{ORG|HMRC}} to update your name; once their record shows [[P|Rebecca Achebe-Thorne]] against [[NINO|HT 90 12 58 A]], the app will match. It usually takes about two weeks."),
    ("a", "Fences are covered for {{WORD|storm}} damage if the wind speed reached 55 mph. I've opened claim {{ID|HC-771204}} for [[A|19 Kaka Street, Raglan 3225]]; an assessor will call you."),
    ("a", "The logins from [[IP|203.0.113.19]] look suspicious, so I've signed out every session on [[E|mo.farouk92@example.com]] and asked you to reset the password. Please turn on two-step verification too."),
    ("a", "Yes, we need three months of payslips from both of you, [[P|Aleksander]] and [[P|Inés]], plus the last {{NUM|12}} months of bank statements."),
    ("a", "The scheme has recorded [[IBAN|NL?? RABO 0331 7425 90]] for member {{ID|PN-4410823}}. International transfers are paid on the {{DATE|25th}} of each month."),
    ("a", "I can't reset the {{PRODUCT|NHS App}} for you, but [[P|Edna]] can get help from her GP surgery, who can verify her in person. It may help to bring photo ID."),
    ("a", "Sorry about the double charge, Mr [[P|Ó Duinn]]. I've reversed the second authorisation on the card ending {{NUM|9101}}; it will drop off within five days."),
    ("a", "KYC checks take up to {{NUM|48}} hours. Your proof of address for [[A|Flat 5B, 23 Caine Road, Mid-Levels, Hong Kong]] was accepted this morning; only the selfie check is still pending."),
    ("a", "Your lease should go to Mr [[P|Dimitrov]] at [[A|ul. Vitosha 15, et. 3, ap. 8, 1000 Sofia, Bulgaria]]. Please send it by tracked post and keep a scan."),
    ("a", "We're very sorry for your loss. We've closed account {{ID|88201457}} for [[P|Harold Pennywhistle]]; the remaining balance of {{PRICE|£1,204.55}} will be paid to the estate once probate is granted."),
    ("a", "Hi [[P|Nikhil]] - your {{PRODUCT|Okta}} account is active now. [[P|Robyn]] will get a notice to approve your app access."),
    ("a", "Congratulations! Registration for [[P|Orla]] can be done at the register office; bring proof of address for [[A|3 Linnet Close, Swindon SN3 6DZ]] and the hospital's birth notification."),
    ("a", "The {{ORG|UPS}} notifications were going to spam. [[E|shipping@rmo-example.com]] is now whitelisted, [[P|Rocky]]; the next pickup confirmation should arrive normally."),
    ("a", "We've found the payment: the {{PRICE|€600}} to [[IBAN|PT?? 0035 0651 0000 7729 4091 3]] arrived on {{DATE|Tuesday}}. You can forward this confirmation to [[P|Duarte]]."),
    ("a", "Separate logins are set up. [[P|Ray]] will receive an invite at [[E|ray.okonedo@example.net]]; the one-time code goes to [[T|+234 812 555 0419]]."),
    ("a", "The report for [[P|Tomasz Baran]] (DOB [[DOB|1967-08-23]]) has been faxed to {{ORG|Eastgate Medical}}, Dr [[P|Krishnamurthy]]."),
    ("a", "Apologies, [[P|Wren]]! A {{PRODUCT|Wren Feeder Pro}} is on its way to [[A|Pinecrest Farm, 2280 Old Stage Road, Floyd, VA 24091]]; keep the baffle, no need to return it."),
    ("a", "[[NINO|JX 73 40 26 B]] is the right one; [[NINO|JX734062B]] has two digits swapped. Please ask your umbrella company to reissue the P60, [[P|Chidi]]."),
    ("a", "I've added [[P|Holly McRae]] and [[P|Glen Baird]] to the {{PRODUCT|Teams}} channel. They'll see it the next time they sign in."),
    ("a", "Please don't share Wi-Fi passwords in chat. The meeting-room network now uses badge sign-in, and the old password has been changed."),
    ("a", "Your refund of {{PRICE|€48.20}} is on its way, [[P|Yasmine]]. The courier has [[A|Bâtiment C, 3e étage, 27 boulevard Voltaire, 75011 Paris, France]] on file for future orders."),
]

# The fifth test split (pii-665 on), written blind after the fourth was read and merged into dev:
# fresh scenarios, people and places, no labelled value reused from the dev records.
TEST_RECORDS: list[tuple[str, str]] = [
    # ---------------------------------------------------------------- questions
    ("q", "Hello, I applied for the {{PRODUCT|MSc Data Science}} programme starting {{DATE|September 2027}} and would like my exams moved to the {{LOC|Nairobi}} study centre. My name is [[P|Wanjiku Mwangi-Odhiambo]], applicant number {{ID|APP-27-118834}}, and my postal address is [[A|PO Box 30197-00100, Nairobi, Kenya]]."),
    ("q", "Can I freeze my gym membership for three months? I had knee surgery and my physio, [[P|Dermot Kilbride]], says no running until {{DATE|February}}. Member number {{ID|GM-004471-K}}."),
    ("q", "We switched energy supplier on {{DATE|1 October}} but you are still collecting the direct debit from [[IBAN|BE?? 0689 0512 3340]]. The account is in my name, [[P|Marieke Vandenbroucke]]. Please refund the {{PRICE|€86.40}} taken last week."),
    ("q", "Is the {{LOC|Kirkwall}} library open on {{DATE|Sundays}}? I want to renew my card before it expires at the end of the month."),
    ("q", "Hi there, I'm selling my car and need to transfer the registration {{ID|KX19 WPT}} to the buyer, Mr [[P|Kwesi Appiah-Danquah]]. Do I need his date of birth, or is his address enough? It's [[A|22 Tamworth Road, Lichfield WS14 9HG]]."),
    ("q", "Our wedding is on {{DATE|14 August 2027}} and the venue wants the deposit paid by card. My fiancé [[P|Tavish Ramsay]] will pay with [[CC|4571 0093 2218 664?]] - can you take it over the phone? His mobile is [[T|07700 900 518]]."),
    ("q", "I donated {{PRICE|£250}} to the hospice appeal in {{DATE|March}} but my {{PRODUCT|Gift Aid}} declaration seems to be missing. The donation came from [[P|Gift Mokoena]], [[A|Flat 9, 140 Pollokshaws Road, Glasgow G41 1PY]]. Could you send the form to [[E|gift.mokoena@example.co.uk]]?"),
    ("q", "My suitcase didn't arrive on flight {{ID|AM 0019}} from {{LOC|Madrid}} to {{LOC|Mexico City}}. Claim reference {{ID|MEXAM41823}}. Please deliver it to [[A|Av. Álvaro Obregón 182, Int. 4, Col. Roma Norte, Cuauhtémoc, 06700 Ciudad de México, CDMX]]. My phone is [[T|+52 55 5555 0261]]. Regards, [[P|Renata Villalobos Ugarte]]"),
    ("q", "I have lived alone since my partner died in {{DATE|June}}. How do I apply for the single person discount on council tax? Account {{ID|CT 4419 0822}}, property [[A|27 Heol y Nant, Pontypridd CF37 4DL]]."),
    ("q", "I'd like to add a second SIM to the {{PRODUCT|Unlimited 65}} family plan for my dad, [[P|Teodoro Abellana]]. His current number is [[T|0491 572 665]] - can he keep it, or does he get a new one?"),
    ("q", "Can you fix the SSN on our joint return? The preparer put my husband's number, [[SSN|614-37-2290]], in my box as well. I'm [[P|Mei-Xing Hollander]]; mine is [[SSN|614-37-2924]]."),
    ("q", "I start a new job on {{DATE|Monday}} and payroll asked for my NI number. It's [[NINO|PW 41 27 63 D]] - is it safe to email that to [[E|payroll@thistledown-example.co.uk]], or is there a form?"),
    ("q", "hiya, the school trip form wants allergy info and an emergency contact, can i just put it here? [[P|Ayo]] is allergic to {{DRUG|penicillin}}, contact is his dad [[P|Babatunde Fashanu]] on [[T|07700 900 604]]"),
    ("q", "My scholarship stipend for {{DATE|October}} hasn't arrived. The bursary office should have my Danish account, [[IBAN|DK?? 3000 0001 2847 55]]. Student name [[P|Signe Thorsager]], student number {{ID|S2291847}}."),
    ("q", "Could your installer come a bit later than 8am to [[A|Ty'n Llidiart, Llanfihangel-y-Pennant, Tywyn LL36 9TR]] for the solar panels? The lane is single track and the school bus uses it. Ask for [[P|Eurig]] at the farm gate."),
    ("q", "How do I claim child benefit for twins? [[P|Isaac]] and [[P|Ezra Abiodun-Clarke]] were born on [[DOB|2 October 2026]] and we already get it for their older sister."),
    ("q", "I want to withdraw {{NUM|0.42}} BTC but the exchange says my IP [[IP|198.51.100.203]] isn't on the withdrawal allowlist. I added it yesterday from my phone. Login is [[E|h.qasim@example.pk]]."),
    ("q", "Please change the name on my conference badge from [[P|Katherine Penrose-Adu]] to [[P|Kit Penrose-Adu]] - nobody has called me [[P|Katherine]] since school. Will the welcome {{WORD|kit}} still be under my old name?"),
    ("q", "Is there a blue badge parking bay for visitors at {{ORG|Royal Alexandra Hospital}}? My mum has appointments every {{DATE|Thursday}} in {{LOC|Paisley}} and can't walk far."),
    ("q", "Do you offer beginner piano lessons on {{DATE|Saturday}} mornings? My son [[P|Matías]] is 7. We live at [[A|Reconquista 1044, piso 6, depto. B, C1003ABV Buenos Aires]] and my number is [[T|+54 11 5555 0193]]."),
    ("q", "Customs are holding my shipment {{TRACK|SGP0047718823}}. The consignee is [[P|Goh Wei Jie]], [[A|Blk 412 Bedok North Ave 2, #08-117, Singapore 460412]]. What documents do they need?"),
    ("q", "The radiator in our flat is leaking again. It's [[A|Apartment 14, Block C, Rathmines Square, Dublin 6, D06 K2P7]] and I'm [[P|Orlaith Breathnach]]. Can the maintenance man ring me first on [[T|+353 87 555 0142]]?"),
    ("q", "Hi! We'd like to view the two-bed flat on {{LOC|Shore Road}} this {{DATE|Saturday}}. It's me, [[P|Carys Bowen]], and my partner [[P|Nathaniel Ekwueme]]. Any time after 11 works."),
    ("q", "I need a certified translation of my Polish birth certificate. It shows [[P|Zofia Grabowska]], born in {{LOC|Gdańsk}} on [[DOB|17.01.1994]]. How much is a {{NUM|2}}-page document, and how long does it take?"),
    ("q", "Can I pause my {{PRODUCT|HelloFresh}} box for {{DATE|December}}? We're going back to see family in {{LOC|Kerala}} for three weeks."),
    ("q", "For the DBS check I entered my NI number as [[NINO|NE 03 81 77 B]] and my date of birth as [[DOB|08/11/1991]], but the form rejects it. The tutoring agency is {{ORG|BrightMinds Tutors}}. Thanks, [[P|Olamilekan Ajibade]]"),
    ("q", "Can a replacement {{ORG|Medicare}} card be mailed to [[A|RR 3 Box 118, Grafton, WV 26354]]? Name is [[P|Earlene Tackett]], SSN [[SSN|233-71-5804]]. I don't drive anymore so I can't come in."),
    ("q", "my banking app says my card [[CC|5178 0591 4420 318?]] is frozen?? i didnt do anything. im in {{LOC|Lisbon}} til {{DATE|friday}} and cant pay for the hotel"),
    ("q", "Who should I email about a data subject access request? I tried [[E|privacy@larkspur-example.com]] and got an auto-reply saying that inbox is no longer monitored."),
    ("q", "Dr [[P|Adaobi Nnamdi-Keller]] asked me to send my home blood pressure readings. Can I upload them here, or should I use [[E|cardiology.results@stjude-example.org]]? My hospital number is {{ID|RXH 448 102 7}}."),
    ("q", "Could you confirm whether {{DRUG|sertraline}} is covered under the {{PRODUCT|Essentials}} plan? Policy holder is [[P|Chayton Redcloud]], member ID {{ID|WXH-88213-04}}."),
    ("q", "i want to send money to my sister [[P|Nomvula]] in {{LOC|Durban}}, her account is with {{ORG|Capitec}}. do u support that or only the big banks"),
    ("q", "Our {{PRODUCT|Slack}} bot stopped posting after I regenerated its token. The old one was [[KEY|xoxb-4471920033-5582910447-Rq7TmLx2Vn9KpW4cZ8bY1dHs]]. Do I need to reinstall the app in the workspace?"),
    ("q", "What's the minimum age for a {{PRODUCT|Junior ISA}}? I'd like to open one for my grandson [[P|Alfie Pendlebury]], born [[DOB|30/01/2019]]."),
    ("q", "Bonjour, je voudrais changer l'adresse de livraison de ma commande {{ID|FR-771203}} pour [[A|12 rue des Tanneurs, 67000 Strasbourg]]. Merci d'avance, [[P|Océane Kieffer]]"),
    ("q", "Guten Tag, die Bank hat meine neue Adresse noch nicht übernommen: [[A|Mariahilfer Straße 88/2/14, 1070 Wien]]. Kontoinhaber [[P|Florian Pichler-Strauß]], Telefon [[T|+43 1 555 83 20]]."),
    ("q", "I can't log in to the supplier portal. I'm Ms [[P|Banks]] from accounts payable at {{ORG|Holloway & Pryor}}; a colleague says {{WORD|banks}} in {{LOC|Jersey}} need extra verification. My direct line is [[T|01534 555 019]]."),
    ("q", "Please cancel the {{PRODUCT|Prime Video}} channel add-on. It's under [[E|the.okorie.family@example.com]]. Thanks, [[P|Ugochi]]"),
    ("q", "can you delete the old address on my account? [[A|37 Ferntree Gully Rd, Oakleigh East VIC 3166]] is my ex's place, I'm at [[A|Unit 5/18 Hope Street, Brunswick VIC 3056]] now"),
    ("q", "Does the {{PRODUCT|Kindle Paperwhite}} work in {{LOC|Iran}}? My cousin [[P|Parisa Jafari]] wants to buy one before she flies back in {{DATE|January}}."),
    ("q", "Hi, I run a small bakery and want to start taking cards. Our business account is [[IBAN|IE?? BOFI 9000 1734 5522 18]], trading as {{ORG|Crumb & Co}}. Contact: [[P|Róisín Keaveney]], [[T|+353 91 555 273]]."),
    ("q", "Quick question - is {{DATE|Easter Monday}} a bank holiday in {{LOC|Scotland}}? I need to know whether the transfer goes out that day."),
    ("q", "My name is [[P|Memory Chirwa]], and my {{WORD|memory}} of the call is that your agent promised a refund of {{PRICE|R1 250}}. Please check the recording from {{DATE|14 October}}. My cell is [[T|+27 82 555 0374]]."),
    ("q", "We keep getting letters addressed to [[P|Lucky Sithole]] at our house, but he moved out last year. Should we write 'not known at this address' and post them back? We were {{WORD|lucky}} the postman asked first."),
    ("q", "Can I add my partner [[P|Innocent Banda]] to my home insurance? He has never made a claim. His date of birth is [[DOB|3rd June 1986]]."),
    ("q", "I'm trying to pay for the visa appointment with [[CC|3528 1148 7720 441?]] and it fails at the 3-D Secure step. I'm in {{LOC|Osaka}} until {{DATE|the 20th}}. - [[P|Fujimoto Rena]]"),
    ("q", "Is [[E|no-reply@alerts.kestrelbank-example.com]] really one of your addresses? It asked me to confirm my details by {{DATE|tomorrow}}."),
    ("q", "Hei, kan dere sende meg kontoutskrift for {{DATE|september}}? Kontoen er [[IBAN|NO?? 1503 4471 208]] og adressen min er [[A|Storgata 41B, 9008 Tromsø]]. Mvh [[P|Ingvild Nergård]]"),
    ("q", "[[P|Willow]] asked me to chase the {{WORD|willow}} fence panels, order {{ID|GH-20771}}. They should go to [[A|The Old Forge, Church Lane, Little Snoring, Fakenham NR21 0HR]], not the shop."),
    ("q", "My login was blocked after too many attempts from [[IP|2001:db8:4f1c::1a]]. That's my home connection. I'm the account owner, [[P|Bear Huxtable]]."),
    ("q", "We need to update the SSN on our daughter's 529 account: it should be [[SSN|402-18-6637]]. She is [[P|Kinsley Dutton]], date of birth [[DOB|2012-04-19]]."),
    ("q", "Can I get paper bills instead? Send them to [[A|1450 Calle Loíza, Apt 3C, San Juan, PR 00911]]. Phone [[T|(787) 555-0136]]. Account holder [[P|Yadiel Santiago Rosario]]."),
    ("q", "Our accountant [[P|Prudence Hargreaves]] needs access to the {{PRODUCT|Xero}} organisation. Her email is [[E|prudence@hargreaves-accounts.example.co.uk]]. In all {{WORD|prudence}}, please make it read-only."),
    ("q", "Can you send me a new card? I think I left mine in a cafe in {{LOC|Kraków}}. The number was [[CC|4364 1902 5531 207?]]."),
    ("q", "How long is the wait for a {{PRODUCT|Model Y}} test drive at the {{LOC|Westfield Stratford}} showroom?"),
    ("q", "Hello, a parcel for [[P|Justice Owusu-Ansah]] was left at my flat, [[A|Flat 3/2, 18 Dumbarton Road, Glasgow G11 6PA]]. I don't know anyone by that name. Can you collect it? Label ref {{TRACK|H01QJA0027731450}}."),
    ("q", "I'm a landlord - can I pay the deposit protection fee from my Polish account, [[IBAN|PL?? 2490 1044 0000 0420 0788 1203]]? The tenancy is {{ID|DPS-558120}}."),
    ("q", "Hi, [[P|Ember]] here. My {{PRODUCT|Nest}} thermostat keeps showing 'no power', and the hallway smoke alarm beeps although there's not an {{WORD|ember}} in the house."),
    ("q", "The transfer from your app to my account [[IBAN|RO?? BTRL 0130 1205 K448 81XX]] keeps failing with error {{ID|E-4117}}. Please help. - [[P|Ioana Drăgulescu]]"),
    ("q", "Please update my phone number: the old one, [[T|+1 415 555 0177]], is disconnected and the new one is [[T|+1 628 555 0119]]. Thanks, [[P|Dashiell Moreno-Katz]]."),
    ("q", "What's the difference between the {{PRODUCT|Standard}} and {{PRODUCT|Plus}} tiers? I only need it for {{NUM|3}} users."),
    ("q", "Hi, I'm [[P|Sunita Gurung]] from {{LOC|Pokhara}}. My remittance of {{PRICE|$480}} to my father [[P|Dil Bahadur Gurung]] shows 'on hold'. The reference is {{ID|RM-7720-1184}}."),
    ("q", "I paid the {{PRICE|$1,140}} tuition instalment twice - once with my card [[CC|4024 0071 5390 662?]] and once with my wife's {{ORG|Amex}}, [[CC|3400 551208 7741?]]. Can one of them be refunded? Student ID {{ID|STU-2219048}}, [[P|Angel Barrientos]]."),
    ("q", "I pasted our {{ORG|Mailgun}} key into a shared doc by mistake: [[KEY|key-7f2c9e41b8d03a6f5e1c7b9d2a48f036]]. The {{PRODUCT|Datadog}} API key was in there too, [[KEY|a41f7c92e08b3d6f1c5e9a27b4d80f13]]. How do I rotate them without downtime?"),
    # ---------------------------------------------------------------- documents: KB, CRM, tool results, letters
    ("d", "KB article {{ID|KB-3107}}: Changing the account holder's name. After marriage, divorce or deed poll, customers can change their name online from Settings > Profile. Upload one of: marriage certificate, decree absolute, enrolled deed poll. Documents are checked within {{NUM|5}} working days. If the upload fails, customers may post certified copies to [[A|Customer Records, PO Box 3310, Sheffield S1 4WN]] or e-mail [[E|name-change@help.example.com]]."),
    ('d', 'tool_result get_customer(id="{{ID|C-0099182}}"):\n{"name": "[[P|Đặng Minh Châu]]", "email": "[[E|minhchau.dang@example.vn]]", "phone": "[[T|+84 24 5555 0198]]", "address": "[[A|Số 18 ngõ 54 phố Hào Nam, phường Ô Chợ Dừa, quận Đống Đa, Hà Nội 100000, Việt Nam]]", "tier": "{{PRODUCT|Silver}}", "created": "{{DATE|2023-05-17}}"}'),
    ("d", "Account summary ({{ORG|Salesforce}} export)\nAccount owner: [[P|Faisal Al-Otaibi]]\nCompany: {{ORG|Najd Logistics Co.}}\nBilling address: [[A|Building 7421, King Fahd Road, Al Olaya District, Riyadh 12214, Saudi Arabia]]\nSettlement account: [[IBAN|SA?? 8000 0001 2346 7781 0442]]\nPrimary contact: [[P|Reem Al-Ghamdi]], [[T|+966 11 555 0174]]\nOpen opportunities: {{NUM|2}} ({{PRICE|SAR 410,000}})"),
    ("d", "Voicemail transcript ({{DATE|Wed 12 Nov, 16:42}}):\n\"Hi, it's [[P|Grainne Tierney]] calling about the quote for the extension. You can reach me on [[T|zero eight six, five five five, zero one nine one]], or email me at [[E|grainne.tierney@example.ie]]. Our address is [[A|Ballinlough, Kilrush Road, Ennis, County Clare, V95 R2X4]]. Thanks, bye.\""),
    ("d", "nginx access.log (excerpt attached to ticket {{ID|WEB-3390}})\n[[IP|203.0.113.58]] - - [12/Nov/2026:09:14:02 +0000] \"POST /api/v2/login HTTP/1.1\" 401 52\n[[IP|203.0.113.58]] - - [12/Nov/2026:09:14:03 +0000] \"POST /api/v2/login HTTP/1.1\" 401 52\n[[IP|198.51.100.211]] - - [12/Nov/2026:09:14:09 +0000] \"GET /api/v2/orders?page=2 HTTP/1.1\" 200 4410"),
    ("d", "docker-compose.yml (from the customer's support bundle)\nservices:\n  db:\n    image: postgres:16\n    environment:\n      POSTGRES_USER: app\n      POSTGRES_PASSWORD: [[KEY|q7!Vd2rLmZ9wXk4s]]\n  worker:\n    environment:\n      TWILIO_AUTH_TOKEN: [[KEY|9f3b1c7e2d8a4f06b5c1e9d7a3f28b64]]\n      REDIS_URL: redis://cache:6379/0"),
    ("d", "Order confirmation {{ID|BR-2026-55190}}\nCliente: [[P|Thaís Nogueira Brandt]]\nEndereço de entrega: [[A|Av. Paulista, 1578 - conj. 92, Bela Vista, São Paulo - SP, 01310-200]]\nTelefone: [[T|+55 11 95555-0147]]\nProduto: {{PRODUCT|Cafeteira Expresso Pro}} ({{SKU|CEP-220V-INOX}})\nTotal: {{PRICE|R$ 1.299,00}} em 10x sem juros"),
    ("d", "Claim intake form (auto)\nClaimant: [[P|Donnell Whitaker-Pryce]]\nSSN: [[SSN|521-64-0893]]\nDate of birth: [[DOB|March 9, 1978]]\nMailing address: [[A|8823 W Cactus Wren Dr, Peoria, AZ 85381]]\nDate of loss: {{DATE|10/28/2026}}\nDescription: hail damage to roof and the {{PRODUCT|Ford F-150}} parked in the driveway."),
    ("d", "New starter checklist - {{ORG|Harrow Valley Care}}\nName: [[P|Chipo Mudenda]]\nRole: Senior carer, nights\nNI number: [[NINO|TM 88 21 04 C]]\nDate of birth: [[DOB|21 Aug 1995]]\nAddress: [[A|41 Kenton Lane, Harrow HA3 8RP]]\nRight to work: checked online {{DATE|10/11/2026}}"),
    ("d", "{{ORG|Garanti BBVA}}\nSayın [[P|Ayşegül Karaca]],\n[[A|Bağdat Caddesi No: 214 Daire: 9\nCaddebostan, 34728 Kadıköy/İstanbul]]\n\n{{DATE|5 Kasım 2026}} tarihli talebiniz üzerine [[IBAN|TR?? 0006 2000 1420 0006 2984 17]] numaralı hesabınız kapatılmıştır. Sorularınız için [[T|+90 212 555 01 86]] numarasını arayabilirsiniz."),
    ("d", "Meeting notes - {{ORG|Fernhill Estates}} lettings, {{DATE|Tuesday}}\nAttendees: [[P|Philomena Blythe]], [[P|Osman Yusufzai]], [[P|Colm]]\n1. The tenant at [[A|Flat 2, 9 Palmerston Place, Edinburgh EH12 5AL]] has reported damp again; [[P|Colm]] to book the surveyor.\n2. [[P|Osman]] to chase the landlord, Mr [[P|Vanstone]], for the gas certificate.\n3. Rent review for {{LOC|Stockbridge}} properties moves to {{DATE|Q2}}."),
    ("d", "Shipment manifest {{ID|MNF-88120}} ({{ORG|Maersk}} {{ID|MSKU 7720418}})\nShipper: {{ORG|Saigon Ceramics JSC}}, [[A|Lô 12, KCN Tân Bình, phường Tây Thạnh, quận Tân Phú, TP. Hồ Chí Minh]]\nConsignee: [[P|Dietmar Hollenbach]], [[A|Industriestraße 14, Halle 3, 28199 Bremen, Germany]]\nNotify: [[E|import@hollenbach-keramik.example.de]]\nGoods: {{NUM|1,240}} cartons glazed tiles, {{NUM|18,600}} kg"),
    ("d", "Slack #support-escalations\n[[P|Anneke]]: anyone know why [[P|Tobenna]]'s customer keeps getting 2FA codes at the wrong number?\n[[P|Tobenna]]: yeah it's on file as [[T|+44 7700 900 872]], she says hers ends 873\n[[P|Anneke]]: lol classic. fix it and note the ticket pls\n[[P|Tobenna]]: done, {{ID|ZD-551208}}"),
    ("d", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: payments-api\n  namespace: prod\nstringData:\n  STRIPE_RESTRICTED_KEY: [[KEY|rk_live_51Nx8TqLm2Vw9Rk4Zc7Bp1Hd3Ys6Fe0Gj]]\n  DB_URL: postgres://payments:[[KEY|Ue4!kQ9vTz2mL8xR]]@[[IP|10.52.3.17]]:5432/payments"),
    ("d", "KB article {{ID|KB-0412}}: International transfers. Payments to accounts outside the {{LOC|UK}} are sent via {{ORG|SWIFT}}. Have the recipient's IBAN and BIC ready. Transfers in euros usually arrive within {{NUM|1}} working day; others take up to {{NUM|4}}. Fees: {{PRICE|£0}} for SEPA, {{PRICE|£15}} for other SWIFT payments. For help, call [[T|0345 555 0190]] ({{DATE|Monday}} to {{DATE|Saturday}}, 8am-8pm)."),
    ("d", "Retrieved passage (policy wording, section 7.3): 'Personal possessions cover applies anywhere in the world for up to {{NUM|60}} days in any period of insurance. The single article limit is {{PRICE|£1,500}} unless the item is listed on the schedule. Claims must be reported within {{NUM|30}} days. We will not pay for items left unattended in a vehicle between 9pm and 6am.'"),
    ("d", "Patient letter\n{{ORG|Queen Margaret Eye Clinic}}\n[[P|Ailsa Forbes-Leith]]\n[[A|Braeside Cottage\nGlen Road\nPitlochry\nPerthshire\nPH16 5JR]]\n\nDate of birth: [[DOB|14/02/1951]]\n\nDear Mrs [[P|Forbes-Leith]],\nYour cataract review has been booked for {{DATE|Monday 8 December}} at 11:15. Please do not drive to the appointment, as drops will be used. Continue using {{DRUG|latanoprost}} as before."),
    ("d", "Sales call log\nCaller: [[P|Imran Dossa]] ({{ORG|Brightline Fitness}})\nNumber: [[T|+44 161 496 0758]]\nInterest: {{PRODUCT|Enterprise}} plan for {{NUM|14}} sites\nNext step: demo with [[P|Freya Linklater]] on {{DATE|Thursday}}; send the pricing sheet to [[E|imran@brightline-example.co.uk]]."),
    ("d", "Airbnb-style booking record\nGuest: [[P|Lukáš Dvořák]]\nGuests: {{NUM|3}}\nCheck-in: {{DATE|18 Dec}}  Check-out: {{DATE|22 Dec}}\nPayout account (host [[P|Kateřina Marešová]]): [[IBAN|CZ?? 0800 0000 1920 4471 8832]]\nListing: [[A|Náměstí Míru 7, byt 12, 120 00 Praha 2, Czech Republic]]"),
    ("d", "Driver manifest - {{ORG|Ridgeway Couriers}} (route {{ID|R-14}})\n1. [[P|Phyllis Ogunbanjo]], [[A|Flat 6, Mulberry House, 2 Tanner Street, London SE1 3LE]] - signature\n2. {{ORG|Borough Dental Practice}}, {{LOC|Borough High St}} - reception\n3. Mr [[P|Ian Crabtree]], [[A|14A Druid Street, London SE1 2HH]] - leave with neighbour at 14B, call [[T|020 7946 0714]]"),
    ("d", "From: [[P|Anders Kjeldsen]] <[[E|anders.kjeldsen@example.dk]]>\nTo: [[E|claims@nordlys-insurance.example.com]]\nSubject: Water damage, policy {{ID|NH-3301877}}\n\nHello, a pipe burst in our summer house at [[A|Strandvejen 212, 3060 Espergærde, Denmark]] while we were away. The neighbour, [[P|Birthe Lauritsen]], found it on {{DATE|Sunday}}. Photos attached. Please pay any settlement to [[IBAN|DK?? 5301 0004 6678 12]].\n\nVenlig hilsen\n[[P|Anders]]\n[[T|+45 55 51 02 83]]"),
    ("d", "Support chat (web widget)\nVisitor: hi i want to change my delivery slot\nBot: Sure! What's your order number?\nVisitor: {{ID|TK-88201}}\nBot: Thanks. Please confirm the postcode.\nVisitor: its [[A|14 Pentland View, Loanhead EH20 9QG]] - the whole thing, sorry\nAgent [[P|Morven]]: Hi! I can move it to {{DATE|Thursday}} 8-10am, does that work?\nVisitor: perfect ty"),
    ("d", "Pharmacy order (online)\nPatient: [[P|Rahel Tesfaye]]\nDOB: [[DOB|1983-06-12]]\nItems: {{DRUG|Levothyroxine}} 75 mcg x 56; {{DRUG|Vitamin D3}} 1000 IU x 90\nDeliver to: [[A|Flat 12, Cedar Point, 55 Wellington Road, Wimbledon, London SW19 8EH]]\nPaid: [[CC|4829 6601 3375 582?]]"),
    ("d", "{{ORG|Kestrel Bank}} fraud alert (SMS log)\nTo: [[T|+44 7700 900 935]]\n{{DATE|12/11 14:02}}: Did you try to pay {{PRICE|£899.00}} at {{ORG|CURRYS ONLINE}} with card ending {{NUM|4418}}? Reply Y or N.\n{{DATE|12/11 14:03}}: N\n{{DATE|12/11 14:03}}: Thanks. Your card has been blocked. We will call you from [[T|0345 555 0217]]."),
    ("d", "Customer profile (read-only)\nName: [[P|Ngoc Anh Pham-Korhonen]]\nAlso known as: [[P|Annie]]\nEmail: [[E|annie.pham@example.fi]]\nMobile: [[T|+358 40 555 0126]]\nAddress: [[A|Hämeentie 58 C 41, 00550 Helsinki]]\nSalary account: [[IBAN|FI?? 4006 1048 0031 77]]\nPreferred language: {{LOC|Finnish}}"),
    ("d", "Tenant application\nApplicant: [[P|Chukwudi Anyanwu]]\nDOB: [[DOB|11 September 1990]]\nEmployer: {{ORG|Halcyon Engineering}}\nCurrent address: [[A|2nd Floor, 17 Admiralty Way, Lekki Phase 1, Lagos, Nigeria]]\nUK guarantor: [[P|Obiora Anyanwu]], [[T|07700 900 247]]\nProposed move-in: {{DATE|1 January}}"),
    ("d", "Search results (CRM, query \"[[P|Belkacem-Roussel]]\")\n1. [[P|Naïma Belkacem-Roussel]] | [[E|n.belkacemroussel@example.fr]] | [[T|+33 1 55 50 83 19]] | {{LOC|Paris}} | last order {{ID|#661204}}\n2. [[P|Karim Belkacem-Roussel]] | [[E|karim.br@example.com]] | no phone | {{LOC|Marseille}} | no orders"),
    ("d", "Git commit pasted in ticket {{ID|DEV-7741}}:\n- const SENTRY_DSN = process.env.SENTRY_DSN;\n+ const SENTRY_DSN = \"https://[[KEY|b41f7e2c9a8d4163a5e0c2f9d7b18e44]]@o44718.ingest.sentry.io/4507712\";\nAuthor: [[P|Jelena Kovačević]] <[[E|jelena.k@lumenworks-example.io]]>"),
    ("d", "Fleet telematics alert\nVehicle: {{ID|VAN-0417}} ({{PRODUCT|Ford Transit Custom}})\nDriver: [[P|Piotr Sadowski]]\nEvent: harsh braking, {{NUM|62}} km/h to 0\nLocation: {{LOC|M62}} eastbound near junction 25\nTime: {{DATE|12 Nov 2026 07:41}}\nDevice IP: [[IP|10.88.14.203]]"),
    ("d", "Dear Ms [[P|Tenbury-Ndlovu]],\n\nThank you for your application for the {{PRODUCT|Platinum Rewards}} card. We are unable to offer you a card at this time. This decision was based on information from {{ORG|Experian}}. You may request a free copy of your report within {{NUM|60}} days.\n\n[[P|Dominique Larkin]]\nCredit Decisions, {{ORG|Albion Card Services}}"),
    ("d", "Loan application (summary)\nApplicant: [[P|Mthunzi Zwane]]\nDate of birth: [[DOB|1979/08/04]]\nAddress: [[A|22 Umgeni Road, Windermere, Durban 4001, South Africa]]\nEmployer: {{ORG|Transnet}}\nAmount: {{PRICE|R85,000}} over {{NUM|48}} months\nBranch contact: [[P|Lindiwe Shabalala]], [[T|+27 31 555 0128]]"),
    ("d", "Intercom conversation export\n[[P|Vaishnavi Balasubramanian]] (customer): the invoice says {{PRICE|₹18,400}} but the quote was {{PRICE|₹16,900}}\n[[P|Vaishnavi Balasubramanian]]: and it went to my old email [[E|vaishnavi.bala@oldmail-example.in]] instead of [[E|vaishnavi.b@kovai-example.in]]\nAgent [[P|Jonah]]: Apologies! Reissuing now to the new address."),
    ("d", "Hotel registration card\nGuest name: [[P|Hendrik Verbruggen]]\nAddress: [[A|Meir 44 bus 3, 2000 Antwerpen, België]]\nNationality: {{LOC|Belgian}}\nArrival {{DATE|23/11}}, departure {{DATE|26/11}}\nGuarantee: [[CC|5598 2710 4463 019?]]\nMobile: [[T|+32 470 55 51 90]]"),
    ("d", "Firewall change request {{ID|CHG-30291}}\nRequested by: [[P|Aarav Chandrasekhar]]\nAllow: [[IP|192.0.2.141]] -> [[IP|10.14.0.25]] tcp/443\nAllow: [[IP|2001:db8:77::40]] -> [[IP|10.14.0.25]] tcp/443\nReason: new {{ORG|Cloudflare}} tunnel for the {{PRODUCT|Grafana}} dashboard\nApprover: [[P|Petronella Kirkbride]]"),
    ("d", "Retrieved passage (returns FAQ): 'You can return most items within {{NUM|28}} days. Items must be unused and in their original packaging. Large items such as the {{PRODUCT|Harbour 3-seater sofa}} are collected by our partner {{ORG|Two Men and a Van}}. Refunds go back to the original payment method within {{NUM|10}} working days of the item reaching us.'"),
    ("d", "Council housing repair request {{ID|HR-7712}}\nTenant: [[P|Maureen Cattermole]]\nAddress: [[A|Flat 31, Brunel Tower, Meadow Road, Swindon SN2 2LQ]]\nPhone: [[T|01793 555 062]]\nRepair: lift out of order; tenant uses a {{PRODUCT|Zimmer}} frame and cannot use the stairs\nPriority: urgent"),
    ("d", "Job application (ATS export)\nCandidate: [[P|Tariku Bekele]]\nEmail: [[E|tariku.bekele@example.et]]\nPhone: [[T|+251 91 555 0163]]\nCurrent city: {{LOC|Addis Ababa}}\nRole applied: Data Engineer II, req {{ID|REQ-4471}}\nReferee: [[P|Selam Gebremedhin]], [[E|selam.g@example.org]]"),
    ("d", "Bank statement (OCR, {{ORG|OTP Bank}})\nSzámlatulajdonos: [[P|Szilágyi Boglárka]]\nCím: [[A|Andrássy út 61. 2. em. 5., 1062 Budapest]]\nSzámlaszám: [[IBAN|HU?? 1177 3016 1122 4471 0000 0000]]\n{{DATE|2026.10.31.}} Fizetés {{PRICE|612 400 Ft}}"),
    ("d", "Customer wrote (email, translated): 'Dear support, I am [[P|Daisuke Harada]]. I bought the {{PRODUCT|Zojirushi NP-HCC10}} rice cooker through your site but the plug is for {{LOC|Japan}}. Please send the correct model to my address in {{LOC|Vancouver}}: [[A|1208-1480 Howe Street, Vancouver, BC V6Z 1R8]].'"),
    ("d", "Estate agent's note ({{ORG|Harbourside Lettings}})\nViewing {{DATE|Sat 10:30}}: [[P|Carys Bowen]] & [[P|Nathaniel Ekwueme]], 2-bed on {{LOC|Shore Road}}\nOwner: [[P|Auberon Pryor-Hale]] (abroad; key with agent)\nOwner contact: [[E|dpryorhale@example.com]]"),
    ("d", "Scanned cheque (OCR)\nPay [[P|Winston Edghill]] ... {{PRICE|Four hundred and twenty pounds only}} ... {{PRICE|£420.00}}\nDated {{DATE|3 Nov 2026}}\nCheque no. {{ID|000418}}\nDrawer: [[P|Marjorie Thistlewood]]"),
    ("d", "Crash report (mobile app, {{VER|v5.12.3}})\ndevice: {{PRODUCT|Pixel 7a}} / {{VER|Android 14}}\nuser: [[E|j.makoni@example.co.zw]]\nclient_ip: [[IP|198.51.100.66]]\nexception: NullPointerException at CheckoutFragment.kt:214\nsession: {{ID|9f1c2e70-41a2-4b3e-bd01-7a29c1f6e4d8}}"),
    ("d", "Care home visitor log\n{{DATE|09/11}} 14:05 [[P|Beryl Thackeray]] visiting [[P|Edwin Thackeray]] (room {{NUM|12}})\n{{DATE|09/11}} 15:20 [[P|Lionel Bellweather]] (chiropodist)\n{{DATE|09/11}} 16:00 Rev. [[P|Michaela Oduro]] (chaplaincy)"),
    ("d", "Vet clinic SMS reminder log\nTo [[T|+61 2 5550 3317]]: Hi [[P|Bridie]], {{WORD|Pepper}}'s annual booster is due on {{DATE|2 Dec}}. Reply 1 to confirm.\nTo [[T|0491 573 770]]: Hi [[P|Rangi]], {{WORD|Nugget}} is ready to collect from {{ORG|Harbord Vets}} after 3pm."),
    ("d", "Mortgage offer (extract)\nBorrowers: [[P|Ciarán Mulholland]] and [[P|Deirdre Mulholland]]\nSecurity property: [[A|4 Cherryvale Avenue, Belfast BT6 0BS]]\nLoan: {{PRICE|£214,000}} over {{NUM|30}} years\nInitial rate: {{NUM|4.29}}% fixed until {{DATE|31/01/2032}}\nSolicitor: {{ORG|McKeague & Doran}}"),
    ("d", "Gym CRM (member record)\nMember: [[P|Dermot Kilbride]]\nNo.: {{ID|GM-004471-K}}\nStatus: frozen {{DATE|14/11/2026}} - {{DATE|14/02/2027}}\nNote: freeze approved for knee surgery; physio letter from [[P|Sinéad Cashman]] attached.\nDD: [[IBAN|IE?? AIBK 9311 5214 4218 90]]"),
    ("d", "tool_result search_bookings(email=\"[[E|r.villalobos@example.mx]]\"):\n[{\"pnr\": \"{{ID|QZ7K2M}}\", \"passenger\": \"[[P|VILLALOBOS UGARTE/RENATA]] MS\", \"route\": \"{{LOC|MAD}}-{{LOC|MEX}}\", \"date\": \"{{DATE|2026-11-09}}\", \"bags\": {{NUM|2}}}]"),
    ("d", "Sponsorship form, {{ORG|Cardiff Half Marathon}}\nRunner: [[P|Lowenna Trevithick]]\nCharity: {{ORG|Macmillan}}\n[[P|Gwyneth Howells]] - {{PRICE|£20}}\n[[P|Dai]] from work - {{PRICE|£10}}\nAnonymous - {{PRICE|£50}}\n[[P|Mostyn Parry]] - {{PRICE|£15}} (Gift Aid: yes, [[A|3 Heol Awel, Llandeilo SA19 6BW]])"),
    ("d", "Wire transfer instruction (SWIFT MT103 preview)\n:50K:/[[IBAN|AE?? 0260 0010 1553 8840 661]]\n[[P|RASHID HAMDAN AL MAZROUEI]]\n[[A|VILLA 14, STREET 22B, AL BARSHA 3, DUBAI, UAE]]\n:59:/[[IBAN|GR?? 0172 0410 0050 4108 8127 334]]\n[[P|KONSTANTINOS PAPANIKOLAOU]]\n:70:INVOICE {{ID|GR-2026-0771}}\n:71A:SHA"),
    ("d", "Ticket {{ID|#20417}}: customer [[P|Ruth Calloway-Singh]] reports that her {{PRODUCT|Fitbit Charge 6}} stopped syncing after the {{VER|4.12}} app update. She is on an {{PRODUCT|iPhone 13}}. Troubleshooting done: re-pair, reinstall. Next: replace under warranty to [[A|27 Lime Tree Walk, Sevenoaks TN13 1YH]]."),
    ("d", "Police report reference (for insurer)\nReporting person: [[P|Marquise Tolliver]]\nDOB: [[DOB|Jan 22, 1992]]\nSSN: [[SSN|372-40-1186]]\nIncident: vehicle break-in at {{LOC|Greektown}} parking garage, {{DATE|Nov 8}}\nItems: {{PRODUCT|MacBook Air}}, backpack\nReport no. {{ID|DPD-26-118204}}"),
    ("d", "W-2 correction request (payroll)\nEmployee: [[P|Consolata Wanyama]]\nSSN on file: [[SSN|560-22-7413]]\nCorrect SSN: [[SSN|560-22-7431]]\nAddress: [[A|415 Magnolia Ave, Unit 2, Savannah, GA 31401]]\nTax year: {{DATE|2025}}"),
    ("d", "Tenancy deposit certificate\nLandlord: [[P|Zbigniew Wierzbicki]]\nTenant(s): [[P|Harvey Ofori]], [[P|Lois Penhaligon]]\nProperty: [[A|Flat B, 71 Cowley Road, Oxford OX4 1HR]]\nDeposit: {{PRICE|£1,615.38}}\nScheme ref: {{ID|DPS-558120}}"),
    ("d", "Employee directory (search 'payroll')\n[[P|Verity Strachan]] - Payroll Manager - ext {{NUM|2218}} - [[E|verity.strachan@thistledown-example.co.uk]]\n[[P|Damilare Olatunji]] - Payroll Officer - ext {{NUM|2241}} - [[E|d.olatunji@thistledown-example.co.uk]]\nShared inbox: [[E|payroll@thistledown-example.co.uk]]"),
    ("d", "HMRC letter (scan)\nMr [[P|Vinod Chaudhry]]\n[[A|88 Belgrave Road\nLeicester\nLE4 5AS]]\nNational Insurance number: [[NINO|SZ 27 90 14 A]]\nTax year {{DATE|6 April 2025 to 5 April 2026}}\nYou paid {{PRICE|£612.40}} too much tax."),
    ("d", "PAYE starter checklist (scan, handwritten)\nSurname: [[P|McAuley]]  First names: [[P|Bernadette Teresa]]\nNINO: [[NINO|RK 45 03 91 D]]\nDOB: [[DOB|2 / 4 / 1999]]\nStatement: B\nStudent loan: Plan 2"),
    ("d", "Right to rent check\nOccupant: [[P|Mihai Ionescu]]\nDocument: {{LOC|Romanian}} identity card\nStatus: EU settled status, checked online\nNI number: [[NINO|ZA 61 72 83 B]]\nChecked by: [[P|Esme Barraclough]]"),
    ("d", "Disputed transaction (card ops)\nCardholder: [[P|Tomasina Greaves]]\nCard: [[CC|6011 0098 7744 215?]]\nMerchant: {{ORG|SKYWAY AIR}} {{PRICE|$612.20}}\nClaim: flight cancelled, no refund\nSecond card on account: [[CC|3782 118450 2276?]]"),
    ("d", "Payments error log ({{ORG|Adyen}} webhook)\n2026-11-12T10:02:11Z refusal card=[[CC|2221 0049 1730 552?]] reason=\"CVC Declined\" ip=[[IP|203.0.113.204]]\n2026-11-12T10:02:49Z refusal card=[[CC|5312 8807 4419 203?]] reason=\"Not enough balance\" ip=[[IP|203.0.113.204]]"),
    ("d", "Driver's licence renewal form\nName: [[P|Kerry-Anne Colquhoun]]\nDate of birth: [[DOB|5 December 1968]]\nAddress: [[A|Unit 4, 212 Princes Highway, Kogarah NSW 2217]]\nPhone: [[T|(02) 5550 7786]]\nLicence class: C"),
    ("d", "Press release (retrieved, {{ORG|Oakmere Foods}}): '{{ORG|Oakmere Foods}} today announced the appointment of [[P|Abimbola Fagbemi]] as Chief Operating Officer. She joins from {{ORG|Unilever}}, where she led supply chain for {{LOC|West Africa}}. Media enquiries: [[E|press@oakmere-example.com]].'"),
    ("d", "Support ticket {{ID|SR-9920}}\nFrom: [[P|Gaurav Malhotra]]\nProblem: API key leaked in public repo\nKey (now revoked): [[KEY|glpat-Xq7Vd2LmRk9TzW4nBc8H]]\nAlso exposed: npm token [[KEY|npm_Lm4Qx9Rt2Vw7Kp1Zc8Yb3Hd6Fs0Gj5Ne2Ua]]\nAction: both revoked {{DATE|12 Nov}} 11:40 UTC"),
    ("d", "Azure storage config (appsettings.json, pasted by [[P|Ilse Vermeulen]])\n\"StorageConnection\": \"DefaultEndpointsProtocol=https;AccountName=ordersprod;AccountKey=[[KEY|Zk4qT9mXv2Lr8WcB1nYd7Hs3Pf6Ge0JaUoIiKt5R+Q2wE8xM==]];EndpointSuffix=core.windows.net\""),
    ("d", "Onboarding email (sent)\nTo: [[E|lwazi.dube@example.co.za]]\nHi [[P|Lwazi]],\nWelcome to {{ORG|Kraal Digital}}! Your temporary password is [[KEY|Fynbos#7724-Kudu]]. You'll be asked to change it at first login.\n[[P|Retha]] (IT)"),
    ("d", "Router config backup (show run, excerpt)\nhostname br-kisumu-01\ninterface GigabitEthernet0/1\n ip address [[IP|172.20.14.1]] 255.255.255.0\nusername admin secret 5 [[KEY|$1$kQ7x$Vt2mLx9RzW4cN8bY1dHsP0]]\nsnmp-server community [[KEY|Kis4mu-ro-2291]] RO"),
    ("d", "Recruiter notes: candidate [[P|Yusuke Okabe]] (currently {{LOC|Fukuoka}}), available from {{DATE|April}}. Prefers contact by email, [[E|y.okabe@example.jp]]; mobile [[T|+81 90-5555-0182]]. Reference from Dr [[P|Amara Cissé]] pending."),
    ("d", "Grant award letter\nDear Professor [[P|Chinwe Eberechukwu]],\nWe are pleased to award {{PRICE|£48,600}} under the {{PRODUCT|Early Career Fellowship}} scheme. Funds will be paid to the {{ORG|University of Kent}} finance office. Your grant officer is [[P|Tamsin Rowe]] ([[E|t.rowe@fundingcouncil.example.org]])."),
    ("d", "Delivery exception report\nConsignment {{TRACK|JD014600006281473920}}\nRecipient: [[P|Ewa Michalak]]\nAddress: [[A|ul. Długa 17/4, 31-147 Kraków, Poland]]\nException: recipient not available; card left\nNext attempt: {{DATE|13/11}}"),
    ("d", "Customer feedback survey (free text): 'The agent, [[P|Clover]], was brilliant. She explained the {{PRODUCT|Clover}} card reader setup step by step and even rang me back on [[T|+1 503 555 0165]] when the call dropped.'"),
    ("d", "Meeting transcript (auto, {{ORG|Zoom}})\n[[P|Ifunanya]]: so the client in {{LOC|Accra}} wants the invoice to [[A|House No. 12, Ridge Road, Roman Ridge, Accra, Ghana]]\n[[P|Ebo]]: and the PO number?\n[[P|Ifunanya]]: {{ID|PO-144-8830}}\n[[P|Ebo]]: fine, I'll copy [[E|finance@tettehsons-example.com.gh]]"),
    ("d", "Event registration export (CSV)\nfirst,last,email,dietary\n[[P|Kit]],[[P|Penrose-Adu]],[[E|kit.pa@example.com]],vegan\n[[P|Magnus]],[[P|Thorvaldsen]],[[E|magnus.t@example.no]],none\n[[P|Aditi]],[[P|Rao-Whitcombe]],[[E|aditi.rp@example.in]],nut allergy"),
    ("d", "Insurance renewal notice\n[[P|Reuben Gallacher]]\n[[A|Croft 7, Borve, Isle of Lewis HS2 0RX]]\nPolicy {{ID|HHX-448211}}\nBuildings cover: {{PRICE|£185,000}}\nRenewal premium: {{PRICE|£412.66}}, due {{DATE|1 Dec 2026}}"),
    ("d", "Delivery note (Dutch)\nAfleveradres: [[A|Oudegracht 218-bis, 3511 NT Utrecht]]\nOntvanger: [[P|Maarten Koopmans]]\nTel: [[T|+31 30 555 0471]]\nPakket {{TRACK|3SABCD1184477201}}"),
    ("d", "Knowledge base: Verifying a caller. Ask for the full name, the first line of the address and the postcode. Never read out the card number, the date of birth or the security answer to the caller. If a caller cannot pass, offer to send a one-time code to the mobile on file. See {{ID|KB-2201}} for power-of-attorney callers."),
    ("d", "Retrieved: {{ORG|Harbord Vets}} opening hours. {{DATE|Monday}}-{{DATE|Friday}} 8am-7pm, {{DATE|Saturday}} 9am-1pm. Emergencies out of hours: call the practice and you'll be transferred to {{ORG|VetsNow}} in {{LOC|Brookvale}}. Vaccinations from {{PRICE|$89}}."),
    ("d", "Chargeback evidence pack {{ID|CB-77120}}\nCardholder: [[P|Rowan Fairley]]\nCard: [[CC|4147 2090 6613 855?]]\nMerchant descriptor: {{ORG|HOLLOWAY OUTDOOR}}\nAmount: {{PRICE|£238.00}}\nAVS: [[A|12 Ashgrove Terrace, Kendal LA9 4QQ]] - match\nNote: the {{WORD|rowan}}-berry print jacket was delivered and signed for on {{DATE|3 Nov}}."),
    ("d", "Card-on-file sheet found during the PCI scope review ({{ID|PCI-2026-07}})\nname,card,expiry\n[[P|Beauty Moyo]],[[CC|5261 4477 0192 336?]],{{DATE|08/28}}\n[[P|Sonny Okpara]],[[CC|4556 7310 2248 901?]],{{DATE|11/27}}\n[[P|Grey Lattimore]],[[CC|6759 6498 2643 101?]],{{DATE|02/29}}\n[[P|Ezinne Okolie]],[[CC|3589 0144 7726 310?]],{{DATE|05/30}}"),
    ("d", "Payroll import log ({{PRODUCT|Sage Payroll}} {{VER|29.1}})\nrow 14: [[P|Fox]], [[P|Ambrose]] - NINO [[NINO|WL 30 58 12 C]] - OK\nrow 15: [[P|Swan]], [[P|Imogen]] - NINO [[NINO|OB 77 41 09 A]] - OK\nrow 16: [[P|Bond]], [[P|Percival]] - NINO [[NINO|JE 19 62 47 B]] - warning: tax code {{ID|1257L}} missing\nrow 17: savings {{WORD|bond}} deduction - skipped"),
    ("d", "School office log ({{ORG|Larchfield Primary}}, {{DATE|Mon}})\n08:40 Mr [[P|Shepherd]] (Year 4 teacher) left the {{WORD|shepherd}}'s pie trays for the bake sale\n09:10 [[P|Saffron Achampong]] collected for the dentist by her mum, [[P|Folake]], [[T|07700 900 146]]\n09:30 {{WORD|saffron}} buns delivered by {{ORG|Greggs}}"),
    # ---------------------------------------------------------------- answers
    ("a", "Thanks, [[P|Wanjiku]]. I've moved your exam centre to {{LOC|Nairobi}} for the {{DATE|September 2027}} intake. Your confirmation letter will be posted to [[A|PO Box 30197-00100, Nairobi, Kenya]] and e-mailed as well."),
    ("a", "Your membership is frozen from {{DATE|14 November}} to {{DATE|14 February}}, and no payments will be taken in that time. I hope the knee recovers well, [[P|Dermot]]."),
    ("a", "Sorry about that, Ms [[P|Vandenbroucke]]. I've cancelled the mandate on [[IBAN|BE?? 0689 0512 3340]] and requested a refund of {{PRICE|€86.40}}; it should reach you within five working days."),
    ("a", "For the transfer you'll need the buyer's full name and address - [[P|Kwesi Appiah-Danquah]], [[A|22 Tamworth Road, Lichfield WS14 9HG]] - but not his date of birth. You can complete it online with the 12-digit reference from your logbook."),
    ("a", "I'm sorry, for security we can't take card details over the phone. [[P|Tavish]] can pay the deposit through the secure link I've just texted to [[T|07700 900 518]]."),
    ("a", "I've re-sent the {{PRODUCT|Gift Aid}} declaration to [[E|gift.mokoena@example.co.uk]], [[P|Gift]]. Once it's signed and returned, we can reclaim {{PRICE|£62.50}} on your donation."),
    ("a", "Your bag has been located in {{LOC|Madrid}} and will arrive on tomorrow's flight. Our courier will deliver it to [[A|Av. Álvaro Obregón 182, Int. 4, Col. Roma Norte, Cuauhtémoc, 06700 Ciudad de México, CDMX]] and call [[T|+52 55 5555 0261]] first, Ms [[P|Villalobos Ugarte]]."),
    ("a", "I'm very sorry for your loss. You can apply for the single person discount online; I've pre-filled the form for [[A|27 Heol y Nant, Pontypridd CF37 4DL]], and the 25% reduction will be backdated to the date your circumstances changed."),
    ("a", "Yes, [[P|Teodoro]] can keep [[T|0491 572 665]]. Once the new SIM arrives, he'll get a text asking him to confirm the transfer; it usually completes within three hours."),
    ("a", "Thanks, [[P|Mei-Xing]]. The preparer needs to file an amended return with [[SSN|614-37-2924]] in your field; the {{ORG|IRS}} will match it within a few weeks. Please don't send SSNs by chat in future."),
    ("a", "Please don't email your NI number. Payroll can collect it through the secure starter form in {{PRODUCT|Workday}}, which [[P|Verity Strachan]]'s team will send you before your first day."),
    ("a", "Thanks - I've added {{DRUG|penicillin}} as an allergy for [[P|Ayo]] and [[P|Babatunde Fashanu]] as the emergency contact on [[T|07700 900 604]]. The trip leader will have a copy."),
    ("a", "The stipend was held because the account name didn't match. Now that the bursary office has confirmed [[IBAN|DK?? 3000 0001 2847 55]] belongs to [[P|Signe Thorsager]], it will be paid on {{DATE|Friday}}."),
    ("a", "No problem - the installer will arrive at [[A|Ty'n Llidiart, Llanfihangel-y-Pennant, Tywyn LL36 9TR]] between 9:30 and 10:00 and will ask for [[P|Eurig]] at the gate."),
    ("a", "You can add [[P|Isaac]] and [[P|Ezra]] to your existing claim rather than starting a new one. Have their birth certificates to hand; payments are backdated up to three months."),
    ("a", "I've added [[IP|198.51.100.203]] to the allowlist for [[E|h.qasim@example.pk]]. New addresses have a 24-hour security hold, so withdrawals will open {{DATE|tomorrow}} at 10:14."),
    ("a", "Done - your badge now reads [[P|Kit Penrose-Adu]]. The welcome {{WORD|kit}} is packed by registration number, so the name change won't affect it."),
    ("a", "Yes, we have a Saturday beginners' class at 10:00. I've pencilled [[P|Matías]] in and will call [[T|+54 11 5555 0193]] to confirm the trial lesson."),
    ("a", "Customs need a commercial invoice and the consignee's ID number. [[P|Goh Wei Jie]] can upload both in the portal; delivery to [[A|Blk 412 Bedok North Ave 2, #08-117, Singapore 460412]] usually follows within two days."),
    ("a", "I've logged an urgent repair for [[A|Apartment 14, Block C, Rathmines Square, Dublin 6, D06 K2P7]]. [[P|Orlaith]], the plumber will ring [[T|+353 87 555 0142]] about 30 minutes before arriving."),
    ("a", "Our translators can certify the birth certificate for [[P|Zofia Grabowska]] within three working days. A two-page document costs {{PRICE|£55}}, including a certified hard copy."),
    ("a", "Your NI number [[NINO|NE 03 81 77 B]] is in the right format. The DBS form wants the date of birth as DD/MM/YYYY, so please enter [[DOB|08/11/1991]] with the slashes, [[P|Olamilekan]]."),
    ("a", "A replacement card has been ordered for [[P|Earlene Tackett]] and will be mailed to [[A|RR 3 Box 118, Grafton, WV 26354]] within 30 days. You don't need to visit an office."),
    ("a", "Your card was paused because of a payment attempt abroad. I've lifted the block on the card ending {{NUM|3187}}, so you can pay the hotel now. Enjoy {{LOC|Lisbon}}!"),
    ("a", "Data subject access requests now go to [[E|dpo@larkspur-example.com]]. Include your full name and any account number; we reply within one month."),
    ("a", "{{DRUG|Sertraline}} is covered under the {{PRODUCT|Essentials}} plan as a tier 1 generic. Mr [[P|Redcloud]], your copay is {{PRICE|$10}} for a 30-day supply."),
    ("a", "Yes, you can send money to {{ORG|Capitec}} accounts. [[P|Nomvula]] just needs to give you her account number and branch code; transfers usually arrive the same day."),
    ("a", "Revoking and reissuing a bot token doesn't require reinstalling the app. Paste the new token into your integration settings. I've removed the old token from this chat's history for safety."),
    ("a", "A {{PRODUCT|Junior ISA}} can be opened from birth, but only a parent or guardian can open it. Once [[P|Alfie Pendlebury]]'s parent has opened it, you can pay in up to {{PRICE|£9,000}} a year."),
    ("a", "C'est fait : la commande {{ID|FR-771203}} sera livrée au [[A|12 rue des Tanneurs, 67000 Strasbourg]]. Bonne journée, [[P|Océane]] !"),
    ("a", "Vielen Dank, Herr [[P|Pichler-Strauß]]. Ihre Adresse ist jetzt [[A|Mariahilfer Straße 88/2/14, 1070 Wien]]; die nächste Karte wird dorthin geschickt."),
    ("a", "Hi Ms [[P|Banks]], I've reset your portal access. The verification step for {{LOC|Jersey}} users is a one-time code sent to [[T|01534 555 019]]."),
    ("a", "I've removed [[A|37 Ferntree Gully Rd, Oakleigh East VIC 3166]] from your account. Deliveries will now only go to [[A|Unit 5/18 Hope Street, Brunswick VIC 3056]]."),
    ("a", "Welcome aboard, [[P|Róisín]]! To set up card payments for {{ORG|Crumb & Co}}, we'll verify [[IBAN|IE?? BOFI 9000 1734 5522 18]] with a small test deposit of {{PRICE|€0.01}}."),
    ("a", "I've requested the call recording from {{DATE|14 October}}, [[P|Memory]]. If the agent promised {{PRICE|R1 250}}, we'll honour it; you'll hear back on [[T|+27 82 555 0374]] within 48 hours."),
    ("a", "I've redirected order {{ID|GH-20771}} to [[A|The Old Forge, Church Lane, Little Snoring, Fakenham NR21 0HR]]. Please let [[P|Willow]] know the panels arrive {{DATE|Wednesday}}."),
    ("a", "The block on [[IP|2001:db8:4f1c::1a]] is lifted, Mr [[P|Huxtable]]. If it happens again, use 'Forgot password' rather than retrying."),
    ("a", "Paper billing is on. Your next bill goes to [[A|1450 Calle Loíza, Apt 3C, San Juan, PR 00911]], and there's no extra fee, [[P|Yadiel]]."),
    ("a", "[[P|Prudence Hargreaves]] has been invited as a read-only user; the invite went to [[E|prudence@hargreaves-accounts.example.co.uk]] and expires in 7 days."),
    ("a", "Thanks for letting us know. A courier will collect the parcel for [[P|Justice Owusu-Ansah]] from [[A|Flat 3/2, 18 Dumbarton Road, Glasgow G11 6PA]] on {{DATE|Friday}}; please leave it with the concierge if you're out."),
    ("a", "Your father's remittance was held for a routine check. It has now been released and [[P|Dil Bahadur Gurung]] can collect {{PRICE|$480}} at any {{ORG|Prabhu Bank}} branch in {{LOC|Pokhara}}, [[P|Sunita]]."),
    ("a", "Based on what [[P|Ruth]] described, the {{PRODUCT|Fitbit Charge 6}} needs replacing. A new unit will be sent to [[A|27 Lime Tree Walk, Sevenoaks TN13 1YH]] within three days."),
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
    for (s1, e1), (s2, _) in zip(spans, spans[1:], strict=False):
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
    dev_records = RECORDS + SECOND_RECORDS + THIRD_RECORDS + FOURTH_RECORDS
    records = [("dev", role, markup) for role, markup in dev_records] + \
              [("test", role, markup) for role, markup in TEST_RECORDS]
    for i, (split, role, markup) in enumerate(records, 1):
        rid = f"pii-{i:03d}"
        text, entities, negatives = parse(markup)
        check(rid, text, entities, negatives)
        rows.append({"id": rid, "split": split, "role": ROLES[role], "text": text,
                     "entities": entities, "negatives": negatives})
    n_dev = len(dev_records)
    assert rows[n_dev]["id"] == "pii-665", "the test split must start at pii-665"
    dev_values = {e["text"] for r in rows[:n_dev] for e in r["entities"]}
    for r in rows[n_dev:]:
        for e in r["entities"]:
            assert e["text"] not in dev_values, f"{r['id']}: labelled value reused from dev: {e['text']!r}"

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
