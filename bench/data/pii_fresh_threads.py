# ruff: noqa: E501  (hand-written records: prose, one per line)
"""The fresh PII set's threads (bench/data/make_pii_fresh.py builds pii_fresh.jsonl from them)."""

from __future__ import annotations

from make_pii_fresh import A, D, Q, Thread

THREADS: list[Thread] = [
    # ---------------------------------------------------------------- retail support
    [
        (Q, "Hi, I ordered a {{PRODUCT|Breville Barista Express}} last week ({{ID|order #A-77120394}}) "
            "but it's going to my old flat. Can you change the delivery address to "
            "[[A|Flat 4, 29 Cranbrook Road, Bristol BS6 7BS]]? Thanks, [[P|Hope Whitaker]]"),
        (A, "Thanks for waiting, [[P|Hope]]. I've moved the delivery for {{ID|order A-77120394}} to "
            "[[A|Flat 4, 29 Cranbrook Road, Bristol BS6 7BS]]. {{ORG|DPD}} will text you a one-hour slot on "
            "the morning of delivery, which is now expected on {{DATE|Thursday 9 May}}. If nobody is in, "
            "the parcel goes to the {{LOCATION|Gloucester Road}} pickup point rather than back to the depot."),
    ],
    [
        (D, """Customer record \u2014 {{ORG|Harbour & Finch Home}}
Name: [[P|Rowena Macaraeg]]
Billing address: [[A|Unit 12, 480 Kingsway, Burnaby, BC V5H 2A9]]
Shipping address: [[A|1187 Commercial Drive, Vancouver, BC V5L 3X4]]
Phone: [[T|+1 604-555-0143]]
E-mail: [[E|rowena.mac@shawmail.example]]
Loyalty tier: Gold since {{DATE|March 2019}}. Last order {{ID|HF-2290417}} ({{PRODUCT|linen duvet set, king}}, {{PRICE|CA$189.00}}) was returned on {{DATE|14 January 2024}} because of a stitching fault; the refund went back to the original card. Agent notes: prefers a phone call after 5pm Pacific rather than email; asked that the courier never leave parcels with neighbours because the building's mailroom has lost two. Preferred courier {{ORG|Purolator}}."""),
        (Q, "Does [[P|Rowena]] have any open returns, and which address do we ship to?"),
        (A, "No open returns: her last one, {{ID|HF-2290417}}, was refunded in {{DATE|January}}. Orders for "
            "[[P|Rowena Macaraeg]] ship to [[A|1187 Commercial Drive, Vancouver, BC V5L 3X4]]; invoices use "
            "the billing address in {{LOCATION|Burnaby}}. She prefers a call on [[T|+1 604-555-0143]] after 5pm."),
    ],
    [
        (Q, "hey its [[P|kwame]] again lol. the app says my parcel was delivered but nothing here. tracking "
            "{{TRACKING_NUMBER|1Z999AA10123456784}}. im at [[A|flat 9b, 61 peckham rye, london se15 4jr]] "
            "if that helps"),
        (A, "Sorry about that, [[P|Kwame]]. The driver's photo shows the parcel at a blue door, so it may have "
            "gone to a neighbour. I've opened an investigation ({{ID|case 55-091873}}) with {{ORG|Evri}}; if it "
            "hasn't turned up within 48 hours we'll send a replacement {{PRODUCT|Anker PowerCore 20000}} free "
            "of charge. Nothing else is needed from you for now."),
    ],
    [
        (D, """Returns and refunds ({{VERSION|policy v3.2}}, updated {{DATE|2 February 2024}})
You can return most items within 30 days of delivery for a full refund. Items must be unused and in their original packaging; personalised items, opened bedding and gift cards cannot be returned. To start a return, open Orders in the {{PRODUCT|Harbour & Finch app}}, choose the item and select Return. Print the label and drop the parcel at any {{ORG|InPost}} locker, or post it to:
{{ORG|Harbour & Finch}} Returns
[[A|Unit 7, Meadowbank Industrial Estate
Rotherham
S61 1EE]]
Refunds are made to the original payment method within 5 working days of the parcel reaching us. Return postage is free for orders over {{PRICE|\u00a340}}; otherwise {{PRICE|\u00a33.95}} is deducted from the refund. Faulty items can be returned at any time within 12 months."""),
        (Q, "Can I post my return myself instead of using a locker? Where to?"),
        (A, "Yes. Post it to {{ORG|Harbour & Finch}} Returns, [[A|Unit 7, Meadowbank Industrial Estate, "
            "Rotherham S61 1EE]], and keep the proof of postage. {{WORD|Hope}} this helps!"),
    ],
    [
        (Q, "My husband [[P|Will]] placed an order on my account and now I can't see it. His email is "
            "[[E|will.ashworth82@example.com]] and mine is [[E|r.ashworth@example.co.uk]]. Can you merge them? "
            "\u2014 [[P|Rachel Ashworth]]"),
        (A, "Hi [[P|Rachel]], we can't merge two accounts, but I can move [[P|Will]]'s order to yours. Once it's "
            "moved you'll see it under Orders, and the confirmation will go to [[E|r.ashworth@example.co.uk]]. "
            "Do you also want his saved address, [[A|8 Thornfield Close, Harrogate HG2 8QP]], copied across?"),
    ],
    [
        (Q, "{{WORD|Bill}} me monthly instead of annually please \u2014 the {{PRODUCT|Teamwork Pro}} annual charge "
            "of {{PRICE|$1,188}} hit my card today and I wasn't expecting it."),
        (A, "I've switched your workspace to monthly billing from the next cycle and refunded the annual charge "
            "of {{PRICE|$1,188}}; it takes 3\u20135 business days to appear. Going forward you'll be charged "
            "{{PRICE|$109}} on the {{DATE|14th}} of each month. {{WORD|Mark}} this as resolved whenever you're ready."),
    ],
    [
        (D, """Ticket {{ID|#48213}} \u2014 Payment failed at checkout
Opened by: [[P|Bill Prentice]] ([[E|bprentice@prentice-joinery.example]])
Plan: {{PRODUCT|Business Annual}}

[[P|Bill]]: Card keeps getting declined, tried twice. It's [[C|4000 0025 0000 3155]] exp 08/27.
Agent ([[P|Summer]]): Thanks [[P|Bill]] \u2014 please don't send full card numbers in chat; I've masked it on our side. The decline code was authentication_required, which means your bank wanted a 3-D Secure check that didn't complete. Could you try again from a desktop browser, with pop-ups allowed?
[[P|Bill]]: Worked second time. Thanks [[P|Summer]].
Status: solved, {{DATE|22 Apr 2024 16:05}}"""),
        (Q, "why did [[P|bill]]'s payment fail last time? he's asking again"),
        (A, "On {{ID|ticket #48213}} the bank asked for a 3-D Secure check that didn't complete, so the charge "
            "was declined; [[P|Bill Prentice]] paid successfully on the second try from a desktop browser."),
    ],
    [
        (Q, "can u check why my refund hasnt come through, order {{ID|7741-2290}}, name on the account is "
            "[[P|grace pellow]]"),
        (A, "Hi [[P|Grace]], the refund for {{ID|order 7741-2290}} was issued on {{DATE|3 June}} for "
            "{{PRICE|\u00a362.40}}. Banks usually take 3\u20135 working days to show it; if you bank with "
            "{{ORG|Monzo}} or {{ORG|Starling}} it tends to be quicker. If it still isn't there by "
            "{{DATE|Monday}}, reply here and we'll ask the payment provider for a trace reference."),
    ],
    [
        (D, """From: {{ORG|Kettle & Crumb}} <[[E|orders@kettleandcrumb.example]]>
To: [[P|Mariana Tavares]] <[[E|mariana.tavares@example.pt]]>
Subject: Your order {{ID|KC-100482}} is confirmed

Ol\u00e1 [[P|Mariana]], thank you for your order!

1 \u00d7 {{PRODUCT|Cast-iron Dutch oven 5.2 L}} \u2014 {{PRICE|\u20ac89.00}}
2 \u00d7 {{PRODUCT|Linen tea towel}} \u2014 {{PRICE|\u20ac18.00}}

Delivering to:
[[P|Mariana Tavares]]
[[A|Rua de Santa Catarina 312, 3.\u00ba Esq.
4000-443 Porto]]

Estimated delivery: {{DATE|Tuesday 12 March}} to {{DATE|Thursday 14 March}}. We'll email you a tracking link from {{ORG|CTT Expresso}} once it ships. Questions? Just reply to this email."""),
        (Q, "Has [[P|Mariana]]'s order shipped yet?"),
        (A, "Not yet \u2014 {{ID|KC-100482}} is packed and will be collected by {{ORG|CTT Expresso}} today; "
            "[[P|Mariana Tavares]] will get the tracking link at [[E|mariana.tavares@example.pt]]."),
    ],
    [
        (Q, "I need to update the address on my subscription. Old: [[A|1427 Maple Ridge Dr, Columbus, OH 43215]]. "
            "New: [[A|3390 Sawmill Parkway, Apt 218, Delaware, OH 43015]]. Effective from next box please."),
        (D, """Delivery address changes ({{PRODUCT|FreshCrate}} help centre)
You can change the address for future boxes at any time until 11:59 pm on the {{DATE|Wednesday}} before your delivery. Go to Account \u203a Deliveries, pick the box and choose Edit address. Changes after the cut-off apply from the following week. We deliver to most of the mainland US; we can't deliver to APO/FPO addresses or to {{LOCATION|Hawaii}} and {{LOCATION|Alaska}}. If you're moving, pause your plan for a week rather than risk a box going to an empty home. During the {{WORD|Summer}} Sale boxes ship from our {{LOCATION|Columbus}} and {{LOCATION|Phoenix}} kitchens, so delivery days may shift by one day."""),
        (A, "Done \u2014 from your next box (shipping {{DATE|Friday the 19th}}) we'll deliver to "
            "[[A|3390 Sawmill Parkway, Apt 218, Delaware, OH 43015]]. The box already packed for this week has "
            "gone out to the old address, [[A|1427 Maple Ridge Dr, Columbus, OH 43215]]; if you can't collect it, "
            "let us know and we'll credit {{PRICE|$34.99}} to your account."),
    ],
    [
        (Q, "Hi there, I'm [[P|Victor Marsh]] and I bought a {{PRODUCT|Dyson V15 Detect}} from you in "
            "{{DATE|November}}. It's stopped charging. Warranty question: do I need the receipt? My phone is "
            "[[T|07700 900418]] if easier to call."),
        (A, "Hi [[P|Victor]], no receipt needed \u2014 your purchase is on record under [[E|vmarsh@example.net]]. "
            "I've booked a courier collection for {{DATE|Wednesday}} between 8am and 6pm from "
            "[[A|22 Linnet Way, Chelmsford CM2 6YF]]; please have it boxed (any box is fine). We'll call "
            "[[T|07700 900418]] if the driver can't find you."),
    ],
    [
        (D, """WARRANTY CLAIM {{ID|WC-2024-00817}}
Product: {{PRODUCT|Bosch Serie 6 dishwasher}}, serial {{ID|FD 9912 00418}}
Customer: Mr [[P|Frank Tillotson]]
Address: [[A|The Old Forge, Church Lane, Great Bardfield, Braintree CM7 4SA]]
Tel: [[T|01632 960221]]
Fault reported: door seal leaking, error E15 shown after every cycle. Engineer visit booked {{DATE|18/06/2024}} AM. Customer notes: access via side gate, dog on premises. Purchased {{DATE|12/01/2022}} from {{ORG|Currys}} with 3-year extended cover, so within warranty; no charge for parts or labour. Authorised by [[P|Dawn Fairbairn]], {{JOB_TITLE|Claims Team Leader}}."""),
        (Q, "When is the engineer coming to Mr [[P|Tillotson]] and is it free?"),
        (A, "The engineer visits [[P|Frank Tillotson]] on the morning of {{DATE|18 June}}. It's free: the "
            "dishwasher is still inside its 3-year cover, as [[P|Dawn Fairbairn]] confirmed when she approved the claim."),
    ],
    [
        (Q, "hi, i think someone used my card on your site?? i never ordered a {{PRODUCT|ps5}}. card is "
            "[[C|5454 5454 5454 5454]]. my name is [[P|agnieszka wroblewska]]"),
        (A, "I'm sorry, [[P|Agnieszka]] \u2014 I've cancelled {{ID|order 3390-118}} before it shipped and flagged "
            "the account. Please don't share your full card number in chat again; I've removed it from our "
            "records. Call your bank's fraud line (the number on the back of your card) and ask them to block it; "
            "the pending charge of {{PRICE|\u00a3479.99}} will drop off once the cancellation settles."),
    ],
    [
        (D, """Fraud review \u2014 {{ID|FR-20931}}
Account holder: [[P|Pawe\u0142 Zieli\u0144ski]], [[E|pawel.zielinski@example.pl]]
Account created {{DATE|2021-09-04}}; 14 orders, none disputed.
Flagged order placed {{DATE|2024-05-11 02:14 UTC}} from IP [[IP|203.0.113.87]] (geolocates to {{LOCATION|Lagos}}); the customer's usual logins come from [[IP|198.51.100.23]] ({{LOCATION|Warsaw}}). Shipping address changed minutes before checkout to [[A|ul. Marsza\u0142kowska 84/92 m. 15, 00-514 Warszawa]], which is not on file. The card used has a different BIN from the one saved on the account. Recommendation: cancel, notify the customer by email, require a password reset. Reviewed by [[P|Joy Pennington]], {{JOB_TITLE|Trust & Safety Analyst}}."""),
        (Q, "Should we cancel the flagged order on [[P|Pawe\u0142]]'s account?"),
        (A, "Yes. [[P|Joy Pennington]] recommends cancelling it: it came from an unfamiliar network and was to "
            "ship to an address that isn't on file. Email [[E|pawel.zielinski@example.pl]] and force a password reset."),
    ],
    [
        (Q, "Quick one: does the {{PRODUCT|Galaxy Buds2 Pro}} work with an {{PRODUCT|iPhone 15}}, and is "
            "{{PRODUCT|Samsung Care+}} available on it in {{LOCATION|Ireland}}?"),
        (A, "Yes, the {{PRODUCT|Galaxy Buds2 Pro}} pair with any {{PRODUCT|iPhone}} over Bluetooth, though "
            "auto-switching and 360 Audio only work with {{ORG|Samsung}} phones. {{PRODUCT|Samsung Care+}} isn't "
            "sold in {{LOCATION|Ireland}} yet; the standard 2-year warranty applies. {{WORD|Hope}} that helps!"),
    ],
    # ---------------------------------------------------------------- HR
    [
        (D, """New starter: [[P|Oluwaseun Adeyemi]]
Role: {{JOB_TITLE|Senior Data Engineer}}
Start date: {{DATE|1 July 2024}}
Date of birth: [[DOB|17/02/1991]]
NI number: [[NINO|JT 48 21 07 C]]
Home address: [[A|Flat 3, 118 Brixton Hill, London SW2 1RS]]
Personal mobile: [[T|+44 7700 900 731]]
Emergency contact: [[P|Folake Adeyemi]] (sister), [[T|+44 7700 900 264]]
Line manager: [[P|Astrid Lindqvist]]
Laptop: {{PRODUCT|MacBook Pro 14 M3}}, asset {{ID|IT-44812}}. Payroll to set up a salary of {{PRICE|\u00a378,500}} from the first pay run on {{DATE|25 July}}; pension auto-enrolment applies."""),
        (Q, "When does [[P|Oluwaseun]]'s probation end, and who signs it off?"),
        (A, "[[P|Oluwaseun Adeyemi]] started on {{DATE|1 July 2024}}, so the six-month probation ends on "
            "{{DATE|31 December 2024}}. Sign-off is by the line manager, [[P|Astrid Lindqvist]], with a copy to "
            "[[P|Lars Holmberg]] in People Ops."),
    ],
    [
        (D, """Parental leave policy ({{VERSION|v4.1}}, {{ORG|Acasia Ltd}})
Employees with at least 26 weeks' service by the 15th week before the due date receive 26 weeks of full pay, followed by 13 weeks of statutory pay. Partners receive 6 weeks of full pay, which can be taken in up to three blocks within a year of the birth or adoption. Employees in {{LOCATION|Germany}} and the {{LOCATION|Netherlands}} follow the local statutory schemes, topped up to full pay for the same periods. Tell your manager and the {{JOB_TITLE|HR Business Partner}} for your region at least 15 weeks before the due date. Keeping-in-touch days are paid at your normal daily rate. This version replaces the policy of {{DATE|June 2022}}."""),
        (Q, "how many weeks full pay do partners get?"),
        (A, "Partners get 6 weeks of full pay, which can be split into up to three blocks within a year of the "
            "birth or adoption."),
    ],
    [
        (Q, "hey can u tell me whos covering for [[P|mehmet]] while hes on leave? need someone to approve my timesheet"),
        (A, "While [[P|Mehmet Aydo\u011fan]] is on leave until {{DATE|the 28th}}, timesheets for his team are "
            "approved by [[P|Zeynep \u00c7elik]]. You can also message her on {{PRODUCT|Slack}} in #ops-approvals."),
    ],
    [
        (D, """Directory \u2014 Finance, {{LOCATION|Dublin}} office

[[P|Siobh\u00e1n N\u00ed Bhriain]] \u2014 {{JOB_TITLE|Financial Controller}}
Desk: [[T|+353 1 555 0172]] \u00b7 Mobile: [[T|+353 87 555 0198]]
[[E|siobhan.nibhriain@acasia.example]]

[[P|Cormac Doyle]] \u2014 {{JOB_TITLE|Accounts Payable Lead}}
Desk: [[T|+353 1 555 0173]]
[[E|cormac.doyle@acasia.example]]

[[P|Grzegorz Nowak]] \u2014 {{JOB_TITLE|Payroll Specialist}}
Desk: [[T|+353 1 555 0181 ext. 22]]
[[E|grzegorz.nowak@acasia.example]]

Office: [[A|Block C, Eastpoint Business Park, Fairview, Dublin 3, D03 R2C6]]
Reception is staffed 8:30\u201317:30; couriers should use the goods entrance behind Block C."""),
        (Q, "What's the address for couriers at the {{LOCATION|Dublin}} office? I've a laptop to send back to IT."),
        (A, "Send it to [[A|Block C, Eastpoint Business Park, Fairview, Dublin 3, D03 R2C6]], marked for the "
            "attention of [[P|Cormac Doyle]], and use the goods entrance. The prepaid {{ORG|An Post}} label is in "
            "the {{PRODUCT|ServiceDesk}} portal under 'Return equipment'."),
    ],
    [
        (D, """To whom it may concern,

I am pleased to confirm that [[P|Ananya Chatterjee]] was employed by {{ORG|Lumen Analytics Pvt Ltd}} as a {{JOB_TITLE|Product Manager}} from {{DATE|April 2019}} to {{DATE|February 2024}}. During this time [[P|Ananya]] led the launch of our {{PRODUCT|InsightDesk}} reporting suite and managed a team of six. Her last drawn salary was {{PRICE|\u20b932,00,000}} per annum.

She may be contacted at [[A|Flat 1102, Tower B, Prestige Shantiniketan, Whitefield, Bengaluru 560048]] or on [[T|+91 98450 12733]].

Yours faithfully,
[[P|Venkatesh Iyer]]
{{JOB_TITLE|Head of Human Resources}}
[[E|venkatesh.iyer@lumenanalytics.example]]"""),
        (Q, "Can you draft a reply to [[P|Ananya]] confirming we received her reference letter?"),
        (A, """Here's a draft:

Dear [[P|Ananya]],
Thank you for sending the reference from {{ORG|Lumen Analytics}}. We've received it and added it to your file; there's nothing more you need to do. Your start date remains {{DATE|Monday 3 June}}.

Best regards,
[[P|Harriet Colquhoun]]
Talent Acquisition"""),
    ],
    [
        (D, """Payroll change \u2014 effective {{DATE|31/05/2024}}
Employee: [[P|Mateus Carvalho]] (employee no. {{ID|004417}})
Old bank: IBAN [[IBAN|GB03 NWBK 6072 9483 7152 06]]
New bank: IBAN [[IBAN|GB37LOYD30964271853602]]
Reason: switched banks. Verified by a call to the mobile number on file, [[T|07700 900 552]], on {{DATE|29 May}} by [[P|Katrin Vogelsang]] ({{JOB_TITLE|Payroll Officer}}). The employee confirmed the last three payslip amounts before the change was accepted. Home address unchanged: [[A|14 Alder Grove, Didsbury, Manchester M20 2FJ]]. No change to tax code or pension contributions."""),
        (Q, "yo, did payroll get my new bank details? its [[P|mateus]]"),
        (A, "Hi [[P|Mateus]], yes \u2014 [[P|Katrin]] processed the change on {{DATE|29 May}}, so your "
            "{{DATE|May}} salary goes to the new {{ORG|Lloyds}} account."),
    ],
    [
        (D, """Interview loop \u2014 {{JOB_TITLE|Backend Engineer}} ({{ID|req. 2291}})
Candidate: [[P|Kiprono Cheruiyot]], [[E|kiprono.cheruiyot@example.co.ke]], [[T|+254 712 555 043]]

09:30 Intro call \u2014 [[P|June Hallett]] (recruiter)
10:00 System design \u2014 [[P|Lars Nystr\u00f6m]]
11:00 Coding \u2014 [[P|Sakura Inoue]]
12:00 Values \u2014 [[P|Jack Lomax]]

All interviews on {{PRODUCT|Google Meet}}; the candidate is in {{LOCATION|Nairobi}} (UTC+3), so the times above are {{LOCATION|London}} time. The candidate has asked for a short break after the coding session. Feedback due in {{PRODUCT|Greenhouse}} by end of day {{DATE|Friday}}."""),
        (Q, "who's interviewing [[P|kiprono]] on friday and can [[P|june]] move the intro to 10?"),
        (A, "The panel for [[P|Kiprono]] is [[P|June]] (intro), [[P|Lars]], [[P|Sakura]] and [[P|Jack]]. "
            "[[P|June]] can't do 10:00 because [[P|Lars]]'s system design slot starts then; she could move the "
            "intro to 09:00 instead, if the candidate agrees."),
    ],
    [
        (D, """Expense claim {{ID|EXP-7731}} \u2014 submitted by [[P|Thibault Rousseau]]
Trip: client workshop, {{LOCATION|Lyon}}, {{DATE|4\u20136 March 2024}}
Hotel {{ORG|Novotel Lyon Confluence}}, 2 nights: {{PRICE|\u20ac412.80}}
Train {{ORG|SNCF}}: {{PRICE|\u20ac146.00}}
Dinner with client ([[P|\u00c9lodie Marchand]], {{ORG|Groupe Vertal}}): {{PRICE|\u20ac98.50}}
Corporate card used for the hotel: [[C|5555 5555 5555 4444]]
Reimburse train and dinner to personal account: [[IBAN|FR43 1027 8060 4100 0287 3615 942]]
Approver: [[P|Beno\u00eet Lef\u00e8vre]]
Receipts attached for all three lines. The dinner is above the per-head limit because the client's colleague joined; see note."""),
        (Q, "Is [[P|Thibault]]'s expense claim within policy?"),
        (A, "Mostly: the claim from [[P|Thibault]] totals {{PRICE|\u20ac657.30}}. The dinner is over the per-head "
            "limit, but a client, [[P|\u00c9lodie Marchand]], attended, so it can be approved as an exception. "
            "[[P|Beno\u00eet]] still needs to sign it off."),
    ],
    # ---------------------------------------------------------------- banking
    [
        (Q, "I want to send {{PRICE|\u20ac2,500}} to my landlord. His IBAN is [[IBAN|DE60 1203 0000 8274 6150 93]] "
            "and his name is [[P|J\u00fcrgen Hofstetter]]. Is there a fee?"),
        (A, "A SEPA transfer of {{PRICE|\u20ac2,500}} to [[P|J\u00fcrgen Hofstetter]] is free and usually arrives "
            "the next business day. The IBAN [[IBAN|DE60 1203 0000 8274 6150 93]] belongs to {{ORG|DKB}}; please "
            "double-check the name matches his account, because the bank runs a name check before releasing the payment."),
    ],
    [
        (D, """{{ORG|Northbridge Bank}} \u2014 Current account statement
Statement period {{DATE|1\u201331 March 2024}}
Ms [[P|Chidinma Okafor]]
[[A|Apartment 6, 40 Whitworth Street West
Manchester
M1 5WW]]

{{DATE|02 Mar}}  {{ORG|Tesco}} Stores 2217      {{PRICE|\u00a354.18}}
{{DATE|05 Mar}}  Transfer from [[P|E Nwosu]]    {{PRICE|\u00a3200.00}}
{{DATE|11 Mar}}  {{ORG|TfL}} travel            {{PRICE|\u00a36.80}}
{{DATE|18 Mar}}  Direct debit {{ORG|Octopus Energy}}  {{PRICE|\u00a392.00}}
{{DATE|25 Mar}}  Salary {{ORG|Kestrel Health Ltd}}  {{PRICE|\u00a32,641.37}}

Opening balance {{PRICE|\u00a31,204.55}}; closing balance {{PRICE|\u00a33,492.94}}. Your arranged overdraft limit is unchanged. If you see a payment you don't recognise, tell us straight away in the app."""),
        (Q, "i got charged twice at {{ORG|tesco}} on the 2nd, can u reverse one? its [[P|chidinma okafor]], acct "
            "in {{LOCATION|manchester}}"),
        (A, "Hi [[P|Chidinma]], only one {{ORG|Tesco}} payment of {{PRICE|\u00a354.18}} on {{DATE|2 March}} has "
            "settled; the second was a pending authorisation and dropped off on {{DATE|4 March}}, so nothing "
            "needs reversing."),
    ],
    [
        (D, """Personal loan application {{ID|PL-558102}}
Applicant: [[P|Dariush Farahani]]
Date of birth: [[DOB|1984-11-23]]
SSN: [[SSN|512-48-3907]]
Address: [[A|2716 Westwood Blvd, Unit 4, Los Angeles, CA 90064]]
Years at address: 6
Employer: {{ORG|Pacifica Dental Group}}, {{JOB_TITLE|Practice Manager}}, annual income {{PRICE|$96,000}}
Co-applicant: [[P|Parisa Moradi]], DOB [[DOB|03/09/1987]], SSN [[SSN|538-71-2046]]
Requested amount: {{PRICE|$25,000}} over 60 months; purpose: home improvements.
Contact: [[T|(310) 555-0127]], [[E|d.farahani@example.com]]
Credit check passed {{DATE|16 May}}; awaiting proof of income for the co-applicant."""),
        (Q, "What's the status of [[P|Dariush]]'s loan? He called asking."),
        (A, "The application {{ID|PL-558102}} for [[P|Dariush Farahani]] and [[P|Parisa Moradi]] passed the "
            "credit check on {{DATE|16 May}} and is waiting for proof of income from [[P|Parisa]]. Once we have "
            "her two latest pay stubs, underwriting takes about two business days."),
    ],
    [
        (D, """Your IBAN and BIC ({{PRODUCT|Northbridge}} help)
Your IBAN (International Bank Account Number) identifies your account for payments from abroad. UK IBANs are 22 characters: GB, two check digits, a four-letter bank code, your six-digit sort code and your eight-digit account number. You'll find yours in the {{PRODUCT|Northbridge app}} under Account details, and on every paper statement. For payments in euro inside the SEPA area you only need the IBAN; for payments from the {{LOCATION|United States}} your sender may also ask for our BIC, {{ID|NBRDGB2L}}. International payments received before 2pm are credited the same day. A fee of {{PRICE|\u00a32}} applies to incoming SWIFT payments below {{PRICE|\u00a3500}}."""),
        (Q, "what's the BIC for receiving money from the US?"),
        (A, "Our BIC is {{ID|NBRDGB2L}}. Your sender needs it along with your IBAN, which is in the app under "
            "Account details; incoming SWIFT payments under {{PRICE|\u00a3500}} cost {{PRICE|\u00a32}}."),
    ],
    [
        (Q, "my card got swallowed by the atm on {{LOCATION|princes street}} lol. card number "
            "[[C|4917 6100 0000 0000]] can you block it"),
        (A, "I've blocked that card straight away and ordered a replacement to your address on file, "
            "[[A|27/3 Marchmont Crescent, Edinburgh EH9 1HD]]. It should arrive within 3\u20135 working days. "
            "Your {{PRODUCT|Apple Pay}} token will move to the new card automatically."),
    ],
    [
        (D, """[[P|Svetlana Kuznetsova]]
[[A|88 Rosedale Avenue, Apt 1207
Toronto, ON M4T 1L4]]

{{DATE|April 8, 2024}}

Disputes Department
{{ORG|Maple Leaf Card Services}}
[[A|PO Box 4110, Station A
Toronto, ON M5W 2K1]]

Re: card [[C|4012 8888 8888 1881]]

I am writing to dispute a charge of {{PRICE|CA$642.15}} from {{ORG|Skyview Travel}} dated {{DATE|March 27, 2024}}. I cancelled this booking by phone on {{DATE|March 20}} and was told the refund would follow within 10 days. I enclose the cancellation email. Please reverse the charge while you investigate. You can reach me at [[T|416-555-0139]] during the day.

Sincerely,
[[P|Svetlana Kuznetsova]]"""),
        (A, "I've logged the dispute for [[P|Svetlana Kuznetsova]] against {{ORG|Skyview Travel}} for "
            "{{PRICE|CA$642.15}}. A temporary credit will appear within two business days, and the merchant has "
            "30 days to respond. We'll write to her at [[A|88 Rosedale Avenue, Apt 1207, Toronto, ON M4T 1L4]] "
            "with the outcome."),
    ],
    [
        (Q, "Can I open a joint account with my partner [[P|Nikos]]? He lives in {{LOCATION|Athens}} but has a "
            "UK National Insurance number from when he worked here."),
        (D, """KYC \u2014 joint account {{ID|JA-30388}}
Holder 1: [[P|Eleni Papadopoulou]], DOB [[DOB|22 August 1990]], NINO [[NINO|PW617340B]], [[A|9 Carlton Mews, Leamington Spa CV32 5NX]]
Holder 2: [[P|Nikos Georgiou]], DOB [[DOB|4 January 1988]], address [[A|Odos Skoufa 45, 106 72 Athina]], tel [[T|+30 21 0555 0193]]
Checks: passports for both holders verified via {{PRODUCT|Onfido}} on {{DATE|12/04/2024}}; proof of address for holder 2 is a {{ORG|DEI}} electricity bill dated {{DATE|March 2024}}. Sanctions and PEP screening clear. Risk rating: low. Outstanding: holder 2's Greek tax number for CRS reporting."""),
        (A, "Yes \u2014 [[P|Nikos]] can be a joint holder even though he lives in {{LOCATION|Greece}}. His identity "
            "is already verified; the only thing missing is his Greek tax number for reporting, which he can add "
            "in the {{PRODUCT|Northbridge app}}. Applications with one overseas holder usually take 5\u20137 working days."),
    ],
    [
        (Q, "hiya, contactless limit is {{PRICE|\u00a3100}} now right? can i raise it"),
        (A, "That's right \u2014 the UK contactless limit has been {{PRICE|\u00a3100}} per payment since "
            "{{DATE|October 2021}}. You can't raise it, but you can lower it or turn contactless off in the app "
            "under Card settings. Payments with {{PRODUCT|Apple Pay}} or {{PRODUCT|Google Pay}} have no fixed limit."),
    ],
    [
        (D, """Hi [[P|Ingrid]],

Just confirming that the mortgage offer for [[A|Flat 5, 71 Victoria Road, Glasgow G42 7AA]] was issued today. Your solicitor, [[P|Rose Kettering]] of {{ORG|Bramble Lane Legal}}, will receive a copy and can request the funds for completion from {{DATE|next Monday}}. The offer is valid for six months. The valuation report will follow separately once the surveyor uploads it. Let me know if anything looks wrong.

Kind regards,

[[P|Magnus Eriksen]]
{{JOB_TITLE|Mortgage Adviser}} | {{ORG|Northbridge Bank}}
T: [[T|0141 496 0377]] | M: [[T|07700 900 912]]
[[E|magnus.eriksen@northbridge.example]]"""),
        (Q, "Send a reply to [[P|Magnus]] saying [[P|Ingrid]] and I are happy with the offer and ask when the "
            "valuation report will be shared."),
        (A, """Hi [[P|Magnus]],

Thanks for confirming. [[P|Ingrid]] and I are happy with the offer for [[A|Flat 5, 71 Victoria Road]]. Could you let us know when the valuation report will be shared?

Best wishes,
[[P|Tom\u00e1s Reilly]]"""),
    ],
    # ---------------------------------------------------------------- healthcare
    [
        (Q, "I need to reschedule my daughter's appointment with Dr. [[P|Okonkwo]]. [[P|Layla]] is booked for "
            "{{DATE|Tuesday 10:40}}, can we do {{DATE|Thursday}} instead? Her date of birth is [[DOB|07/05/2016]]."),
        (A, "I've moved [[P|Layla]]'s appointment with Dr [[P|Okonkwo]] to {{DATE|Thursday 16 May at 15:20}} at "
            "the {{LOCATION|Kingsmead}} surgery. You'll get a text confirmation shortly. If she still has a "
            "fever, please tell reception when you arrive."),
    ],
    [
        (D, """{{ORG|Riverside Medical Practice}}
[[A|2 Wellington Road, Exeter EX2 9AS]]

PRIVATE AND CONFIDENTIAL
Mr [[P|Arjun Mehrotra]]
[[A|51 Pinhoe Road
Exeter
EX4 7HL]]
Date of birth: [[DOB|30.01.1979]]

Dear Mr [[P|Mehrotra]],
You have been booked for a diabetic eye screening appointment on {{DATE|Wednesday 22 May 2024}} at 09:15 at {{LOCATION|Royal Devon and Exeter Hospital}}. Please bring your glasses and a list of your medicines, for example {{DRUG|metformin}} or {{DRUG|gliclazide}}. The eye drops will blur your vision for up to six hours, so do not drive to the appointment. To change it, call the screening office on [[T|0117 496 0184]]."""),
        (Q, "does mr [[P|mehrotra]] need to fast before his eye screening?"),
        (A, "No fasting is needed for diabetic eye screening; [[P|Arjun Mehrotra]] should take his medicines as "
            "usual, bring his glasses, and arrange a lift home because the drops blur vision for several hours."),
    ],
    [
        (Q, "hi can i get a repeat of my {{DRUG|sertraline}} 50mg. name's [[P|sam ochieng]], dob [[DOB|14/11/1993]]"),
        (A, "Thanks [[P|Sam]]. I've sent the repeat request for {{DRUG|sertraline}} 50 mg to Dr [[P|Fairweather]]; "
            "it's usually signed within two working days and sent to your nominated pharmacy, {{ORG|Boots}} on "
            "{{LOCATION|High Street}}."),
    ],
    [
        (D, """Referral \u2014 Physiotherapy
Patient: [[P|Joost van den Berg]], born [[DOB|2 March 1969]]
Address: [[A|Van Speijkstraat 18, 2518 EV Den Haag]]
Phone: [[T|+31 70 555 0142]]
Referring GP: dr. [[P|Femke Janssen]], {{ORG|Huisartsenpraktijk Zeeheldenkwartier}}

Reason: left shoulder pain for 3 months after a fall while cycling; reduced abduction, pain at night. X-ray on {{DATE|12 February}}: no fracture. Has tried {{DRUG|ibuprofen}} 400 mg as needed with partial relief. Please assess and treat; the patient prefers appointments after 16:00 because of work. Insurance: {{ORG|Zilveren Kruis}}, policy {{ID|ZK-88301762}}."""),
        (Q, "Is dr [[P|Janssen]] taking new patients?"),
        (A, "Not at the moment \u2014 dr. [[P|Femke Janssen]]'s list is full until {{DATE|September}}. Her colleague "
            "dr. [[P|Pieter Bakker]] at the same practice still has space; you can register online or at the desk."),
    ],
    [
        (D, """SMS log \u2014 {{ORG|Smile Studio Dental}}, {{LOCATION|Parramatta}}
{{DATE|10/06}} 09:02 to [[T|0491 570 156]]: Hi [[P|Thanh]], reminder of your check-up with Dr [[P|Vo]] tomorrow at 2:30pm. Reply Y to confirm.
{{DATE|10/06}} 09:02 to [[T|+61 491 570 157]]: Hi [[P|Rafael]], your hygiene appointment is on Wed at 11:00. Reply Y to confirm.
{{DATE|10/06}} 09:03 to [[T|0491 570 158]]: Hi [[P|Joy]], your crown fitting is tomorrow at 4pm at [[A|Level 2, 150 Church Street, Parramatta NSW 2150]]. Please arrive 10 minutes early.
{{DATE|10/06}} 09:41 from [[T|0491 570 156]]: Y
{{DATE|10/06}} 10:15 from [[T|+61 491 570 157]]: can we move to thurs pls"""),
        (Q, "[[P|rafael]] wants to move his hygiene appt to thursday, what slots are there?"),
        (A, "For [[P|Rafael]] there are hygiene slots on {{DATE|Thursday}} at 9:20am and 1:40pm with "
            "[[P|Mei Ling Tan]]. I'll text him at [[T|+61 491 570 157]] to ask which he prefers."),
    ],
    [
        (D, """Discharge summary \u2014 {{ORG|St Columba's Hospital}}, Ward 7B
Patient: [[P|Mohammed Al-Rashidi]]  DOB: [[DOB|19/09/1958]]
Admitted {{DATE|02/04/2024}}, discharged {{DATE|06/04/2024}}
Consultant: Mr [[P|Salvatore Esposito]], {{JOB_TITLE|Consultant Cardiologist}}
Diagnosis: NSTEMI; one drug-eluting stent to the LAD on {{DATE|03/04}}.
Medication on discharge: {{DRUG|aspirin}} 75 mg, {{DRUG|ticagrelor}} 90 mg twice daily for 12 months, {{DRUG|atorvastatin}} 80 mg, {{DRUG|bisoprolol}} 2.5 mg.
Follow-up: cardiac rehab referral sent; clinic in 6 weeks.
Next of kin: [[P|Fatima Al-Rashidi]] (wife), [[T|+44 (0)7700 900 386]].
Discharged to home address: [[A|63 Greenbank Drive, Liverpool L17 1AP]]."""),
        (Q, "When is [[P|Mohammed Al-Rashidi]] due back in clinic and who is his consultant?"),
        (A, "[[P|Mohammed Al-Rashidi]] should be seen in cardiology clinic about six weeks after discharge, so "
            "around {{DATE|the week of 20 May}}. His consultant is Mr [[P|Esposito]]. He should stay on "
            "{{DRUG|ticagrelor}} for the full 12 months unless the clinic says otherwise."),
    ],
    [
        (Q, "hello, i booked a blood test for my mum, her name is [[P|nguyen thi lan]], date of birth "
            "[[DOB|05/08/1955]], but the letter came to the wrong house. we're at [[A|17 oakfield rd]] not {{NUMBER|71}}"),
        (A, "Thanks \u2014 I've corrected the address for Mrs [[P|Nguyen Thi Lan]] to "
            "[[A|17 Oakfield Road, Selly Oak, Birmingham B29 7HH]] and re-sent the letter. The blood test is "
            "still on {{DATE|Friday 7 June at 08:50}} at the {{LOCATION|Selly Oak}} health centre; she should "
            "fast from midnight."),
    ],
    [
        (D, """Prescription delivery \u2014 {{ORG|MedExpress Pharmacy}}, route 14, {{DATE|Tue 21 May}}
1. Mrs [[P|K. Vlachou]], [[A|Flat 12, Cedar Court, 3 Mill Lane, Cambridge CB2 1RX]] \u2014 2 items, signature required
2. Mr [[P|H. Nakamura]], [[A|41a Mawson Road, Cambridge CB1 2DZ]] \u2014 fridge item ({{DRUG|insulin glargine}}), hand to patient only
3. Ms [[P|Ewa Kowalczyk]], [[A|7 Hobart Road, Cambridge CB1 3PU]] \u2014 leave in porch if out
4. Mr [[P|Babatunde Olatunji]], [[A|The Granary, 2 Water Street, Chesterton, Cambridge CB4 1NZ]] \u2014 call [[T|07700 900 643]] on arrival, gate code given by phone
Driver: [[P|Dmitri]]. Fridge items must be back in the pharmacy fridge within 2 hours if undelivered."""),
        (Q, "Did the insulin get to Mr [[P|Nakamura]] today? He says nobody came."),
        (A, "The route log shows the driver, [[P|Dmitri]], reached [[A|41a Mawson Road]] at 14:52 and got no "
            "answer; because {{DRUG|insulin glargine}} must be handed over in person, he brought it back to the "
            "pharmacy fridge. We can redeliver tomorrow morning, or Mr [[P|Nakamura]] can collect it from "
            "{{LOCATION|Mill Road}} today until 6pm."),
    ],
    [
        (D, """Booking a vaccination ({{ORG|Healthpoint Clinics}})
Seasonal flu vaccines are available from {{DATE|1 October}} at all our clinics, including the one next to {{LOCATION|Baker Street station}} and our new site in {{LOCATION|Canary Wharf}}. Adults pay {{PRICE|\u00a318}}; children aged 2\u201317 receive the nasal spray {{DRUG|Fluenz}} for {{PRICE|\u00a315}}. COVID-19 boosters ({{DRUG|Comirnaty}}) are offered privately for {{PRICE|\u00a399}}. Book online or in the {{PRODUCT|Healthpoint app}}; walk-ins are accepted when there is space. Please tell us before your appointment if you have had a severe reaction to any vaccine or are allergic to eggs. {{WORD|Grace}} periods for cancelled appointments: cancel up to 24 hours before and you pay nothing."""),
        (Q, "how much is a flu jab for a 10 year old?"),
        (A, "Children aged 2\u201317 get the {{DRUG|Fluenz}} nasal spray for {{PRICE|\u00a315}}; you can book it online "
            "from {{DATE|1 October}}."),
    ],
    # ---------------------------------------------------------------- logistics
    [
        (D, """Consignment {{TRACKING_NUMBER|JD0002245871930214}} \u2014 {{ORG|Northwind Freight}}
Shipper: {{ORG|Atelier Verdier SARL}}, [[A|27 rue Saint-Sauveur, 75002 Paris]]
Consignee: [[P|Anne-Sophie Garnier]], [[A|B\u00e2timent B, 3 all\u00e9e des Tilleuls, 69003 Lyon]]
Tel. consignee: [[T|+33 6 39 98 12 47]]
Contents: 3 \u00d7 {{PRODUCT|silk scarves}}, declared value {{PRICE|\u20ac540}}
Service: {{PRODUCT|Express 24}}
Pickup {{DATE|13/05/2024}}, expected delivery {{DATE|14/05/2024}} before noon. Signature required; do not leave with the concierge. Delivery attempt 1: failed, reason 'access code needed'."""),
        (Q, "bonjour, my parcel {{TRACKING_NUMBER|JD0002245871930214}} says delivery failed but i was home all day?? "
            "[[P|anne-sophie]]"),
        (A, "Bonjour [[P|Anne-Sophie]], I'm sorry about that. The driver recorded 'access code needed' at "
            "[[A|3 all\u00e9e des Tilleuls]]. I've added a note asking them to call you on [[T|+33 6 39 98 12 47]] "
            "on arrival and rebooked delivery for {{DATE|tomorrow}} before noon."),
    ],
    [
        (D, """Route {{ID|R-118}} ({{LOCATION|Leeds}} north), {{DATE|Thu 6 Jun}}, driver [[P|Tomasz Wi\u015bniewski]]
Stop 1  [[A|12 Otley Road, Headingley, Leeds LS6 3PX]]  \u2014 [[P|Hannah Scholes]] \u2014 2 parcels
Stop 2  [[A|Flat 7, Mill House, 40 Kirkstall Lane, Leeds LS5 3BE]]  \u2014 [[P|Obinna Chukwu]] \u2014 call [[T|0113 496 0542]] (buzzer broken)
Stop 3  [[A|3 Weetwood Avenue, Leeds LS16 5NF]]  \u2014 [[P|Deepika Rao]] \u2014 safe place: shed
Stop 4  [[A|Unit 2, Meanwood Works, Leeds LS7 2AA]]  \u2014 {{ORG|Hop & Barley Brewing}} \u2014 pallet, tail-lift needed
Stop 5  [[A|88 Moor Road, Leeds LS6 4BH]]  \u2014 [[P|Mark Thwaite]] \u2014 age-verified item ({{PRODUCT|Laphroaig 10}})"""),
        (Q, "hi, is my whisky still coming today? its [[P|mark thwaite]], [[A|88 moor road]]"),
        (A, "Hi [[P|Mark]], yes \u2014 you're the last stop on [[P|Tomasz]]'s route, expected between 4 and 6pm. "
            "Because it's an age-restricted item he'll need to see photo ID, so please have your driving "
            "licence or passport ready."),
    ],
    [
        (D, """CN23 customs declaration
Sender: [[P|Wang Xiaoling]], [[A|Room 1803, Block 2, Jinqiao Garden, 88 Zhangyang Road, Pudong, Shanghai 200122]]
Recipient: [[P|Chen Jiahao]], [[A|Unit 3, 12 Stanmore Road, Stanmore NSW 2048]]
Recipient phone: [[T|+61 2 5550 3187]]
Items: 2 \u00d7 {{PRODUCT|Longjing green tea}} 250 g, {{PRICE|CNY 480}}; 1 \u00d7 silk robe, {{PRICE|CNY 620}}
Gift: yes. Declared total {{PRICE|CNY 1,100}}.
Posted {{DATE|8 May 2024}} at the {{LOCATION|Shanghai}} international mail centre. Held at {{LOCATION|Sydney Gateway}} on {{DATE|17 May}}: food item, biosecurity inspection required."""),
        (Q, "The parcel from my aunt [[P|Xiaoling]] is stuck in customs in {{LOCATION|Sydney}}, what do I do?"),
        (A, "{{ORG|Australian Border Force}} holds gift parcels when food is declared. [[P|Jiahao]], you'll get a "
            "letter or an email asking you to confirm the tea is commercially packaged; reply with a photo of "
            "the packaging and it's usually released within 3\u20135 business days. There's no duty on gifts "
            "worth under {{PRICE|A$1,000}}."),
    ],
    [
        (D, """From: [[P|Kofi Boateng]] <[[E|kofi.boateng@northwindfreight.example]]>
To: Depot managers
Subject: Damaged pallets, {{LOCATION|Felixstowe}}, {{DATE|30 April}}

Hi all,

Two pallets for {{ORG|Greenleaf Garden Centres}} ({{ID|PO 44719}}, {{ID|PO 44720}}) were damaged by a forklift at bay 12 this morning. [[P|Akosua Mensah]] has photographed both and logged {{ID|INC-3307}}. The customer's receiving contact is [[P|Summer Hayes]] ([[T|01632 960 715]]); please don't call her until [[P|Akosua]] has confirmed what can be salvaged.

Thanks,
[[P|Kofi]]

[[P|Kofi Boateng]]
{{JOB_TITLE|Operations Manager}}, {{ORG|Northwind Freight}}
[[A|Port House, Dock Road, Felixstowe IP11 3QW]]
M [[T|+44 7700 900 127]]"""),
        (Q, "Who's handling the {{ORG|Greenleaf}} damage and what's the incident number?"),
        (A, "[[P|Akosua Mensah]] is handling it under {{ID|INC-3307}}. She's photographing the pallets for "
            "{{ORG|Greenleaf Garden Centres}}, and [[P|Kofi Boateng]] has asked that nobody contacts their "
            "receiving team until she's finished."),
    ],
    [
        (D, '''{"tool": "address_validate", "customer": "[[P|Aoife Brennan]]", "input": "[[A|flat 2 14 grange rd dublin 6]]", "normalised": "[[A|Flat 2, 14 Grange Road, Rathgar, Dublin 6, D06 W2K9]]", "eircode_valid": true, "confidence": 0.92, "county": "{{LOCATION|Dublin}}", "notes": "house number matched; unit taken from free text; 3 earlier failed deliveries to {{LOCATION|Grange Park}} on this account", "carrier": "{{ORG|Fastway}}", "checked_at": "{{DATE|2024-05-20T10:12:44Z}}", "suggestion": "ask the customer to add the unit number to the first address line and to confirm the Eircode, because drivers scan the Eircode before they read the street name on the label"}'''),
        (Q, "my driver keeps going to the wrong house. its [[A|14 grange road, flat 2]], not [[A|14 grange park]]"),
        (A, "Thanks \u2014 I've pinned the delivery point to [[A|Flat 2, 14 Grange Road, Rathgar, Dublin 6, D06 W2K9]] "
            "and added the Eircode, which drivers' scanners check before the street name. Future deliveries "
            "should no longer go to {{LOCATION|Grange Park}}."),
    ],
    [
        (D, """Angebotsanfrage / Quote request
Abholung: {{ORG|Hofmann Maschinenbau GmbH}}, [[A|Industriestra\u00dfe 12, 73230 Kirchheim unter Teck]]
Zustellung: [[A|Lindenstra\u00dfe 42, 10969 Berlin]], z. Hd. Frau [[P|Friederike Oswald]]
Ansprechpartner: [[P|Maximilian Brandt]], [[T|+49 7021 555 0148]], [[E|m.brandt@hofmann-maschinenbau.example]]
Ware: 1 Palette, 320 kg, 120 \u00d7 80 \u00d7 110 cm, nicht stapelbar
Gew\u00fcnschter Termin: {{DATE|KW 23}}
Bitte Preis inkl. Hebeb\u00fchne angeben. Anlieferung nur werktags zwischen 8 und 15 Uhr; die Empf\u00e4ngerin ist vorab telefonisch zu avisieren."""),
        (Q, "Can you quote the {{ORG|Hofmann}} pallet to {{LOCATION|Berlin}}? Contact is [[P|Maximilian]]."),
        (A, "For one 320 kg pallet from {{LOCATION|Kirchheim unter Teck}} to [[A|Lindenstra\u00dfe 42, 10969 Berlin]] "
            "with a tail-lift, our price is {{PRICE|\u20ac285}} plus VAT, delivered in {{DATE|week 23}}. I'll send "
            "the quote to [[P|Maximilian Brandt]] at [[E|m.brandt@hofmann-maschinenbau.example]] and copy in "
            "Ms [[P|Oswald]] as the receiver."),
    ],
    [
        (D, """Albar\u00e1n de entrega {{ID|ALB-2024-03318}}
Cliente: [[P|Consuelo Vidal Ferrer]]
Direcci\u00f3n: [[A|Calle de Alcal\u00e1 118, 3\u00ba B, 28009 Madrid]]
Tel\u00e9fono: [[T|+34 612 55 01 88]]
Art\u00edculos: {{PRODUCT|sof\u00e1 modular N\u00f3rdico}} 3 plazas ({{SKU|SKU 88-412-07}}), montaje incluido
Entrega: {{DATE|jueves 23 de mayo}}, franja 9:00\u201314:00
Observaciones: portero autom\u00e1tico averiado, llamar al m\u00f3vil. Recogida del sof\u00e1 antiguo en la segunda direcci\u00f3n: [[A|C/ Mallorca 241, 5\u00ba 2\u00aa, 08008 Barcelona]] (casa de su hijo [[P|\u00cd\u00f1igo]])."""),
        (Q, "hola, is my sofa still coming on thursday? [[P|consuelo vidal]]"),
        (A, "Hola [[P|Consuelo]], yes \u2014 the {{PRODUCT|N\u00f3rdico}} sofa is on {{DATE|Thursday}}'s van to "
            "[[A|Calle de Alcal\u00e1 118, 3\u00ba B, Madrid]], between 9:00 and 14:00. The driver will call "
            "[[T|+34 612 55 01 88]] because the entry phone is broken."),
    ],
    # ---------------------------------------------------------------- travel
    [
        (D, """Booking reference {{ID|QX7P2M}}
Passengers: Mr [[P|Burak \u00d6zt\u00fcrk]], Mrs [[P|Elif \u00d6zt\u00fcrk]], Miss [[P|Defne \u00d6zt\u00fcrk]] (child)
Flights: {{ID|TK1980}} {{LOCATION|London Heathrow}} \u2192 {{LOCATION|Istanbul}} {{DATE|14 Jul 2024}} 11:35; {{ID|TK1971}} return {{DATE|28 Jul 2024}} 08:10
Contact: [[E|burak.ozturk@example.com.tr]], [[T|+90 532 555 01 73]]
Payment: card [[C|3782 822463 10005]], {{PRICE|\u00a31,284.60}}
Billing address: [[A|19 Station Parade, Ealing, London W5 3LD]]
Baggage: cabin bags only. Seats: 23A\u201323C. Special meals: none."""),
        (Q, "Can I add a bag for [[P|Defne]]? She's 9."),
        (A, "Yes \u2014 on {{ID|booking QX7P2M}} I can add a 23 kg bag for Miss [[P|Defne \u00d6zt\u00fcrk]] on both "
            "flights for {{PRICE|\u00a345}} each way. It'll be charged to the card on file and the receipt sent to "
            "[[E|burak.ozturk@example.com.tr]]."),
    ],
    [
        (Q, "hi, lost my passport in {{LOCATION|lisbon}}, flight home is tmrw, pls help. im "
            "[[P|priya raghunathan]], staying at [[A|rua da prata 61, 2nd floor]]"),
        (A, "I'm sorry, [[P|Priya]]. Report the loss at the nearest {{ORG|PSP}} police station and then contact "
            "the {{ORG|British Embassy}} in {{LOCATION|Lisbon}} for an emergency travel document; it costs "
            "{{PRICE|\u00a3100}} and is often issued the same day. I've noted your booking so you can move the "
            "flight for free if the document isn't ready in time."),
    ],
    [
        (D, """Guest registration \u2014 {{ORG|Hotel Bellavista}}, {{LOCATION|Sorrento}}
Room 214, {{DATE|3\u20137 September 2024}}
Guest 1: [[P|Lorenzo Bianchini]], nato il [[DOB|12/04/1982]] a {{LOCATION|Bologna}}
Residenza: [[A|Via Saragozza 97, 40123 Bologna BO]]
Guest 2: [[P|Chiara Santoro]], nata il [[DOB|28/10/1985]]
Phone: [[T|+39 347 555 0126]]
Card for incidentals: [[C|4242 4242 4242 4242]] (pre-authorised {{PRICE|\u20ac200}})
Notes: late arrival around 23:00, requested a quiet room away from the lift, celebrating their anniversary \u2014 prosecco in room on arrival."""),
        (Q, "Can you arrange a boat to {{LOCATION|Capri}} for the couple in 214, [[P|Lorenzo]] and [[P|Chiara]]?"),
        (A, "I can book two seats on the 09:30 {{ORG|Caremar}} ferry to {{LOCATION|Capri}} on "
            "{{DATE|Thursday 5 September}} for [[P|Lorenzo Bianchini]] and [[P|Chiara Santoro]], "
            "{{PRICE|\u20ac24.50}} each, added to room 214. Shall I also reserve a table at {{ORG|Da Paolino}} for lunch?"),
    ],
    [
        (D, """Claim {{ID|TI-4410927}} \u2014 trip cancellation
Policyholder: [[P|Natalia Sokolova]]
Policy: {{PRODUCT|Annual Multi-Trip Gold}}, valid {{DATE|01/02/2024}}\u2013{{DATE|31/01/2025}}
Trip: {{LOCATION|Manchester}} to {{LOCATION|Tenerife}}, {{DATE|18\u201325 April 2024}}, cost {{PRICE|\u00a31,920}}
Reason: hospital admission on {{DATE|16 April}} (letter from Dr [[P|Alexei Morozov]] attached).
Pay-out to: [[IBAN|GB74 BARC 2047 6183 9204 57]]
Correspondence: [[A|Apartment 9, 2 Chapel Wharf, Salford M3 5DT]], [[E|natalia.sokolova@example.org]]
Assessor note: cancellation cover applies; excess {{PRICE|\u00a375}}; airline refunded taxes only."""),
        (Q, "yo whens my claim getting paid, its [[P|natalia]]. ref {{ID|TI-4410927}}"),
        (A, "Hi [[P|Natalia]], your claim {{ID|TI-4410927}} was approved on {{DATE|9 May}} for {{PRICE|\u00a31,845}} "
            "(the {{PRICE|\u00a375}} excess deducted). The payment was sent on {{DATE|10 May}} and should reach "
            "your account within three working days."),
    ],
    [
        (D, """Rental agreement {{ID|RA-552901}} \u2014 {{ORG|Coastline Car Hire}}, {{LOCATION|Cairns Airport}}
Driver: [[P|Jericho Villanueva]], QLD licence (number on file)
Additional driver: [[P|Maria Cristina Dela Cruz]]
Address: [[A|PO Box 2213, Cairns QLD 4870]]
Mobile: [[T|0491 570 159]]
Vehicle: {{PRODUCT|Toyota RAV4 Hybrid}}, {{DATE|20/07}} to {{DATE|27/07}}
Payment: [[C|5200828282828210]]; bond {{PRICE|A$500}}
Drop-off: [[A|Shop 4, 17 Esplanade, Port Douglas QLD 4877]] (after-hours key box)
Excess reduction purchased. Unsealed roads not permitted under this agreement."""),
        (Q, "Is the {{LOCATION|Port Douglas}} drop-off open on {{DATE|Sunday}}? [[P|Jericho]] asked."),
        (A, "The {{LOCATION|Port Douglas}} office is closed on {{DATE|Sundays}}, but [[P|Jericho]] can leave the car "
            "in the bays outside [[A|Shop 4, 17 Esplanade]] and drop the keys in the after-hours box. Staff will "
            "check the car on {{DATE|Monday}} morning and email the final invoice."),
    ],
    [
        (Q, "Is there a direct train from {{LOCATION|Amsterdam Centraal}} to {{LOCATION|Paris Nord}} and how long does it take?"),
        (A, "Yes, {{ORG|Eurostar}} runs direct trains from {{LOCATION|Amsterdam Centraal}} to {{LOCATION|Paris Nord}} "
            "in about 3 hours 20 minutes, with fares from {{PRICE|\u20ac35}} when booked early. {{WORD|Summer}} "
            "timetables add a few extra services at weekends."),
    ],
    # ---------------------------------------------------------------- SaaS
    [
        (D, """Audit log \u2014 workspace {{ID|acme-prod}}
{{DATE|2024-05-02T08:14:22Z}} user [[E|hyun-woo.choi@acmecorp.example]] signed in from [[IP|192.0.2.44]] ({{PRODUCT|Chrome 124}}, {{LOCATION|Seoul}})
{{DATE|2024-05-02T08:15:03Z}} [[P|Choi Hyun-woo]] invited [[E|seo-yeon.park@acmecorp.example]] as Editor
{{DATE|2024-05-02T09:41:50Z}} [[P|Park Seo-yeon]] accepted the invite from [[IP|2001:db8:4a1f::1c]]
{{DATE|2024-05-02T10:02:11Z}} live API key [[S|ak_live_7Fq2Rz9XbL1mWc4Tn8Vd0Yp3]] created by [[P|Choi Hyun-woo]]
{{DATE|2024-05-02T10:05:40Z}} SSO configuration changed ({{PRODUCT|Okta}}) by [[P|Lee Min-jun]] ([[E|min-jun.lee@acmecorp.example]])
{{DATE|2024-05-02T10:06:12Z}} SCIM provisioning enabled; 42 users will be synced from the identity provider every 40 minutes
{{DATE|2024-05-02T11:30:08Z}} export of all projects started by [[P|Choi Hyun-woo]], delivered by email"""),
        (Q, "Who created the live API key in {{ID|acme-prod}} yesterday? We need to rotate it."),
        (A, "The live key was created by [[P|Choi Hyun-woo]] at 10:02 UTC on {{DATE|2 May}}. To rotate it, go to "
            "Settings \u203a API keys, create a new key, update your integrations, then revoke the old one; "
            "revoking it first would break anything still using it."),
    ],
    [
        (D, """Ticket {{ID|SUP-90412}} \u00b7 Priority: high \u00b7 {{PRODUCT|Ledgerly}} {{VERSION|4.12.3}}
From: [[P|Ngozi Eze]] <[[E|ngozi@ezeandco-accounting.example]]>

Hi team, since updating to {{VERSION|4.12.3}} this morning the bank feed for our client {{ORG|Obi Foods Ltd}} shows every transaction twice. I've attached a screenshot. We're on the {{PRODUCT|Practice}} plan with 14 seats. Could someone call me? My direct line is [[T|+234 803 555 0147]]; I'm in {{LOCATION|Lagos}} so please call before 5pm WAT.

Thanks,
[[P|Ngozi]]

[[P|Ngozi Eze]] ACA
{{JOB_TITLE|Managing Partner}}, {{ORG|Harmattan Accounting}}
[[A|14 Adeola Odeku Street, Victoria Island, Lagos 101241]]"""),
        (Q, "summarise [[P|ngozi]]'s ticket for the eng channel"),
        (A, "[[P|Ngozi Eze]] ({{ORG|Harmattan Accounting}}, {{PRODUCT|Practice}} plan) reports duplicated bank-feed "
            "transactions for one client since upgrading to {{VERSION|4.12.3}} this morning; screenshot attached "
            "to {{ID|SUP-90412}}. She's asked for a call before 5pm WAT."),
    ],
    [
        (D, """{{PRODUCT|Ledgerly}} {{VERSION|4.12.4}} release notes ({{DATE|3 May 2024}})
Fixed: duplicated bank-feed transactions for {{ORG|Barclays}}, {{ORG|GTBank}} and {{ORG|Standard Chartered}} connections, introduced in {{VERSION|4.12.3}}. Duplicates created since the upgrade are removed automatically within 24 hours; reconciled duplicates are flagged for review instead.
Improved: CSV import now accepts dates as DD/MM/YYYY and amounts with a comma as the decimal separator.
Known issue: the {{PRODUCT|Practice}} dashboard may show last month's totals until the nightly refresh.
{{WORD|Frank}} feedback welcome: reply to this email or post in the community forum. The {{DATE|June}} release will bring multi-currency budgets."""),
        (Q, "is the duplicate bank feed bug fixed?"),
        (A, "Yes, {{VERSION|4.12.4}} (released {{DATE|3 May}}) fixes it, and duplicates created since the upgrade are "
            "removed within 24 hours; ones you already reconciled are flagged for review."),
    ],
    [
        (Q, "hey, i can't log in, reset link goes to my old work email [[E|tran.minh.quan@oldcompany.example]]. new "
            "one is [[E|quan.tran@example.vn]]. name [[P|tran minh quan]]"),
        (A, "Hi [[P|Quan]], I've verified you with your security questions and changed your login email to "
            "[[E|quan.tran@example.vn]]. The old address, [[E|tran.minh.quan@oldcompany.example]], no longer receives "
            "anything from us. A new reset link is on its way."),
    ],
    [
        (D, """GET /v1/accounts/{{ID|acc_83hf2k}}/billing \u2192 200
billing_name: [[P|Sigrid Haugen]]
company: {{ORG|Fjordlys Design AS}}
billing_email: [[E|sigrid@fjordlys.example]]
address: [[A|Thorvald Meyers gate 56, 0552 Oslo]]
vat_id: {{ID|NO 923 456 781 MVA}}
plan: {{PRODUCT|Studio}} ({{PRICE|NOK 1,490}}/month, 5 seats)
payment_method: card on file, expires 09/26
next_invoice: {{DATE|2024-06-01}}
invoice_language: nb-NO
dunning: none
created: {{DATE|2021-11-17}}
notes: customer asked for invoices in Norwegian with the VAT number on every page; purchase order number required from the next renewal onwards"""),
        (Q, "Can you change the invoice email for {{ORG|Fjordlys}} to [[E|accounts@fjordlys.example]] and keep "
            "[[P|Sigrid]] in copy?"),
        (A, "Done: invoices for {{ORG|Fjordlys Design AS}} now go to [[E|accounts@fjordlys.example]], with "
            "[[P|Sigrid Haugen]] in copy at [[E|sigrid@fjordlys.example]]. The change applies from the "
            "{{DATE|1 June}} invoice."),
    ],
    [
        (D, """Suspicious login alert
User: [[P|Haruto Nakamura]] ([[E|h.nakamura@example.jp]])
Time: {{DATE|2024-04-18 23:47 JST}}
IP: [[IP|203.0.113.201]] \u2014 new device, {{PRODUCT|Firefox 125}} on {{PRODUCT|Windows 11}}
Previous IP: [[IP|198.51.100.7]]
Action: session blocked, MFA challenge sent by SMS to [[T|+81 90-5550-1234]]
Result: challenge passed at 23:52 JST; the user confirmed by email that he was travelling in {{LOCATION|Osaka}} and using a hotel computer. Recommendation sent: sign out of shared computers and review active sessions."""),
        (Q, "Why was [[P|Haruto]] locked out last night?"),
        (A, "[[P|Haruto]]'s session was blocked because he signed in from a new device and network at 23:47 JST. "
            "He passed the MFA challenge a few minutes later and confirmed it was him, so the block has been lifted."),
    ],
    [
        (D, """Subject: Data subject access request

Hello,

Under Article 15 GDPR I request a copy of all personal data you hold about me, including call recordings and marketing preferences. Account email: [[E|k.vogel@example.de]]. Former address: [[A|Hauptstr. 7a, 80331 M\u00fcnchen]]; current address: [[A|Am Kupfergraben 4, 10117 Berlin]]. Please send the export to my current email address only. Date of birth for verification: [[DOB|09.06.1976]].

Mit freundlichen Gr\u00fc\u00dfen
[[P|Klaus Vogel]]"""),
        (Q, "what's the deadline to answer [[P|Klaus Vogel]]'s access request?"),
        (A, "One month from receipt, so if it arrived on {{DATE|14 May}} the deadline is {{DATE|14 June}}. You can "
            "extend by two further months for complex requests, but you must tell [[P|Klaus Vogel]] within the first month."),
    ],
    [
        (Q, "does the {{PRODUCT|pro plan}} include sso? we're 40 ppl"),
        (A, "Single sign-on is included from the {{PRODUCT|Business}} plan upward; {{PRODUCT|Pro}} doesn't include it. "
            "For 40 seats {{PRODUCT|Business}} is {{PRICE|$18}} per seat a month, billed annually. {{PRODUCT|Okta}}, "
            "{{PRODUCT|Microsoft Entra ID}} and {{PRODUCT|Google Workspace}} are supported out of the box."),
    ],
    [
        (D, """Kickoff call \u2014 {{ORG|Sunbird Logistics}} \u00d7 {{ORG|Ledgerly}}, {{DATE|7 May}}
Attendees: [[P|Kwabena Owusu-Ansah]] ({{JOB_TITLE|COO}}), [[P|Efua Owusu]] ({{JOB_TITLE|Finance Lead}}), [[P|Francesca Lombardi]] (our {{JOB_TITLE|Customer Success Manager}})
Notes: they run three entities in {{LOCATION|Ghana}} and one in {{LOCATION|C\u00f4te d'Ivoire}}; need multi-currency (GHS, XOF). [[P|Efua]] will send the chart of accounts by {{DATE|Friday}}. [[P|Kwabena]] asked about migrating from {{PRODUCT|Xero}}; [[P|Francesca]] to share the import guide. Go-live target {{DATE|1 July}}.
Head office for invoices: [[A|Plot 12, Ring Road Central, Kanda, Accra, GA-124-5567]]"""),
        (Q, "what did [[P|kwabena]] ask about on the kickoff"),
        (A, "[[P|Kwabena Owusu-Ansah]] asked about migrating their books from {{PRODUCT|Xero}}; [[P|Francesca]] is "
            "sending him the import guide."),
    ],
    # ---------------------------------------------------------------- property / US
    [
        (D, """Tenant roster \u2014 {{ORG|Cedar Point Property Management}}, updated {{DATE|May 2024}}
Unit 1A \u2014 [[P|Jack Delgado]], [[T|(512) 555-0164]]
Unit 2C \u2014 [[P|Guadalupe Reyes]] and [[P|Marco Reyes]], [[T|512.555.0189]]
Unit 3B \u2014 vacant, listed at {{PRICE|$1,650}}/mo
Building: [[A|4410 Duval Street, Austin, TX 78751]]
Owner correspondence: [[A|PO Box 16233, Austin, TX 78761]]
Plumbing contractor: {{ORG|Lone Star Plumbing}}, [[A|900 E 6th St, Suite 120, Austin, TX 78702]]
HVAC contractor: {{ORG|Capital Air}} (on call weekdays 8\u20136)
Rent due on the 1st; late fee {{PRICE|$75}} after the 5th."""),
        (Q, "the ac in 2c is broken again, can someone come today. [[P|guadalupe]]"),
        (A, "Hi [[P|Guadalupe]], I've logged the AC repair for [[A|Unit 2C, 4410 Duval Street]] as urgent and booked "
            "{{ORG|Capital Air}} for between 1 and 5pm today; the technician will text [[T|512.555.0189]] "
            "30 minutes before arriving."),
    ],
    [
        (D, """Quote {{ID|AQ-77310}} \u2014 {{ORG|Harbor Mutual}} auto insurance
Named insured: [[P|Dawn Whitfield]]; DOB [[DOB|June 3, 1972]]
Garaging address: [[A|2208 N Kedzie Ave, Apt 2R
Chicago, IL 60647]]
Mailing address: [[A|PO Box 47120, Chicago, IL 60647]]
Vehicle: {{PRODUCT|2019 Honda CR-V EX}}
Drivers: [[P|Dawn Whitfield]], [[P|Ricardo Whitfield]] (spouse)
Premium: {{PRICE|$1,146}} per 6 months, paid in full; {{PRICE|$198}} monthly if paid by installments.
SSN collected for credit-based pricing: [[SSN|627-40-5519]]
Discounts applied: multi-driver, anti-theft device, paperless billing."""),
        (Q, "What would [[P|Dawn]] pay monthly on the {{ORG|Harbor Mutual}} quote?"),
        (A, "On {{ID|quote AQ-77310}}, [[P|Dawn Whitfield]] would pay {{PRICE|$198}} a month by installments, or "
            "{{PRICE|$1,146}} for six months paid in full."),
    ],
    [
        (D, """W-4 intake ({{ORG|Brightwater Staffing}})
Employee: [[P|Jose Miguel Bautista]]
SSN: [[SSN|401-62-8873]]
Address: [[A|78 Bleecker St, Apt 5F, New York, NY 10012]]
Filing status: married filing jointly; spouse [[P|Rosalind Bautista]] also works.
Dependents: 2 children under 17.
Start date {{DATE|June 10, 2024}}, {{JOB_TITLE|Warehouse Associate}}, {{PRICE|$21.50}}/hour.
Emergency contact: [[P|Rosalind Bautista]], [[T|(917) 555-0152]].
Direct deposit form outstanding; payroll will issue a paper check for the first pay period if it is not received by {{DATE|June 14}}."""),
        (Q, "has [[P|jose miguel]] sent his direct deposit form yet?"),
        (A, "Not yet. If payroll doesn't have it by {{DATE|June 14}}, [[P|Jose Miguel Bautista]]'s first pay will be a "
            "paper check mailed to [[A|78 Bleecker St, Apt 5F, New York, NY 10012]]."),
    ],
    [
        (D, """Ship-to addresses on file for account {{ID|C-20418}} ({{ORG|Tidewater Outfitters}})
1. Main store: [[A|5120 SE Division St, Portland, OR 97206]]
2. Warehouse: [[A|2261 NW Front Ave, Bldg C, Portland, OR 97209]]
3. Owner's home (samples only): [[A|1847 Birch Hollow Lane
Lake Oswego, OR 97034]]
4. Mailbox for invoices: [[A|PMB 302, 2261 Market St, San Francisco, CA 94114]]
Account contact: [[P|Jack Holloway]], [[T|503-555-0110]], [[E|jack@tidewater-outfitters.example]]
Terms: net 30, credit limit {{PRICE|$40,000}}. Freight: LTL via {{ORG|Old Dominion}} for orders over 500 lb."""),
        (Q, "Where should the {{PRODUCT|Patagonia}} samples for {{ORG|Tidewater}} go?"),
        (A, "Samples go to [[P|Jack Holloway]]'s home address, [[A|1847 Birch Hollow Lane, Lake Oswego, OR 97034]]; "
            "everything else ships to the warehouse at [[A|2261 NW Front Ave, Bldg C, Portland, OR 97209]]."),
    ],
    # ---------------------------------------------------------------- Ireland / Australia
    [
        (D, """{{ORG|Electric Ireland}} \u2014 bill {{ID|900-412-338}}
Account holder: [[P|Niamh Gallagher]]
Supply address: [[A|Apartment 12, The Maltings, Bow Street, Smithfield, Dublin 7, D07 N8F3]]
Billing period {{DATE|1 Mar \u2013 30 Apr 2024}}
Day units 412, night units 266
Standing charge {{PRICE|\u20ac38.20}}; PSO levy {{PRICE|\u20ac3.23}}; VAT at 9%
Amount due {{PRICE|\u20ac214.56}} by {{DATE|21 May 2024}}. Pay by direct debit to save 5% on unit rates. Your next meter reading is due in {{DATE|June}}; submit it online to avoid an estimated bill."""),
        (Q, "can i put the electricity bill in my partner's name? he's moving in next month \u2014 [[P|cian o'sullivan]]"),
        (A, "Yes, [[P|Cian]]. Once you've moved into [[A|Apartment 12, The Maltings, Bow Street, Dublin 7]], "
            "[[P|Niamh]] can add you as a joint account holder, or you can take over the account in the "
            "{{PRODUCT|Electric Ireland app}}; either way there's no break in supply."),
    ],
    [
        (D, """Rental application \u2014 [[A|Unit 5/22 Beach Road, Bondi NSW 2026]]
Applicant: [[P|Isabella Moretti]]
Current address: [[A|14/3 Glebe Point Road, Glebe NSW 2037]] (2 years)
Previous address: [[A|27 Lygon Street, Carlton VIC 3053]]
Mobile: [[T|0491 570 110]]
Employer: {{ORG|Harbourside Physio}}, {{JOB_TITLE|Physiotherapist}}, {{PRICE|$1,850}} per week
Referee: [[P|Declan Murphy]], previous property manager, [[T|(02) 5550 4471]]
Pets: one indoor cat. Preferred lease: 12 months from {{DATE|1 July}}. Bond to be lodged with {{ORG|NSW Fair Trading}}."""),
        (Q, "Has the agent called [[P|Isabella]]'s referee yet?"),
        (A, "Yes, [[P|Declan Murphy]] was called on {{DATE|Tuesday}} and gave a positive reference, so "
            "[[P|Isabella Moretti]]'s application for [[A|Unit 5/22 Beach Road, Bondi]] has gone to the owner."),
    ],
    [
        (Q, "G'day, I've moved. New postal address is [[A|PO Box 318, Fremantle WA 6959]] and the street address "
            "is [[A|4/11 Marine Terrace, South Fremantle WA 6162]]. Mobile still [[T|0491 570 006]]. Cheers, "
            "[[P|Bronwyn Kelly]]"),
        (A, "Thanks [[P|Bronwyn]], both addresses are updated. Statements will go to [[A|PO Box 318, Fremantle WA 6959]] "
            "and deliveries to [[A|4/11 Marine Terrace, South Fremantle WA 6162]]."),
    ],
    # ---------------------------------------------------------------- India
    [
        (D, """Delivery attempt failed \u2014 {{ORG|BlueDart}} AWB {{TRACKING_NUMBER|50981277364}}
Consignee: [[P|Sunita Deshpande]]
Address: [[A|Flat 304, Sai Krupa Apartments, 5th Cross, Indiranagar, Bengaluru 560038]]
Mobile: [[T|+91 98860 55123]]
Reason: premises locked. Next attempt {{DATE|24-05-2024}}. The consignee may instead collect from the {{LOCATION|Indiranagar}} service centre at [[A|No. 12, 100 Feet Road, HAL 2nd Stage, Bengaluru 560008]] with a photo ID, Monday to Saturday, 10:00\u201319:00. Shipments not collected within 7 days are returned to the shipper, {{ORG|Kalpa Electronics}}."""),
        (Q, "parcel came back again, pls deliver to my office instead: [[A|3rd floor, prestige tech park, "
            "marathahalli, bengaluru 560103]]. [[P|sunita]]"),
        (A, "Done, [[P|Sunita]]. The next attempt on {{DATE|24 May}} will go to [[A|3rd Floor, Prestige Tech Park, "
            "Marathahalli, Bengaluru 560103]]; the courier will call [[T|+91 98860 55123]] from reception."),
    ],
    [
        (D, """Employee master update \u2014 {{ORG|Vistara Softech}}
Name: [[P|Harpreet Kaur Sandhu]]
Permanent address: [[A|House No. 218, Sector 15-A, Chandigarh 160015]]
Current address: [[A|B-12, Sector 62, Noida, Uttar Pradesh 201301]]
Phone: [[T|+91-98140-55327]]
Emergency contact: [[P|Gurpreet Singh Sandhu]] (father), [[T|0172 255 0419]]
Effective {{DATE|1 April 2024}}. Form 16 for FY 2023-24 will show the current address; HR letters will be couriered there unless the employee asks otherwise."""),
        (Q, "Can you update [[P|Harpreet]]'s address for the Form 16?"),
        (A, "It's already updated: [[P|Harpreet Kaur Sandhu]]'s Form 16 will use [[A|B-12, Sector 62, Noida, "
            "Uttar Pradesh 201301]]. Her permanent address in {{LOCATION|Chandigarh}} stays on file for records."),
    ],
    [
        (Q, "Please send the visa invitation letter to my parents: [[P|Ramesh Pillai]] and [[P|Lakshmi Pillai]], "
            "[[A|TC 25/1432, Vazhuthacaud, Thiruvananthapuram, Kerala 695014]]. Their phone is [[T|0471 255 8391]]."),
        (A, "I'll courier the letter for [[P|Ramesh Pillai]] and [[P|Lakshmi Pillai]] to [[A|TC 25/1432, "
            "Vazhuthacaud, Thiruvananthapuram, Kerala 695014]] by {{ORG|DHL}} today; they should have it in 3\u20134 "
            "working days and can book the {{ORG|VFS Global}} appointment once it arrives."),
    ],
    # ---------------------------------------------------------------- Netherlands / France / Spain / Germany / Canada
    [
        (D, """Huurcontract \u2014 samenvatting
Huurder: [[P|Sanne de Vries]]
Adres: [[A|Prinsengracht 518-II, 1017 KJ Amsterdam]]
Verhuurder: {{ORG|Grachtenhuis Beheer B.V.}}, [[A|Postbus 10524, 1001 EM Amsterdam]]
Huur: {{PRICE|\u20ac1.675}} per maand, ingangsdatum {{DATE|1 april 2024}}
Borg: {{PRICE|\u20ac3.350}}, te betalen op [[IBAN|NL53 INGB 0007 3619 48]]
Contact huurder: [[T|+31 6 5550 1483]], [[E|sanne.devries@example.nl]]
Opzegtermijn: \u00e9\u00e9n maand voor de huurder, wettelijk voor de verhuurder. Servicekosten worden jaarlijks afgerekend."""),
        (Q, "hoi, my landlord says the deposit must go to [[IBAN|NL53 INGB 0007 3619 48]] \u2014 is that a normal dutch "
            "iban? [[P|sanne]]"),
        (A, "Yes, [[P|Sanne]], that's a valid Dutch IBAN and the check digits are correct; it's an {{ORG|ING}} account. "
            "Before paying {{PRICE|\u20ac3,350}} I'd still confirm the account name matches {{ORG|Grachtenhuis Beheer B.V.}}, "
            "since deposit scams often use a real-looking IBAN."),
    ],
    [
        (D, """{{ORG|PostNL}}: je pakket is bezorgd bij de buren
Beste [[P|Daan Visser]],
Je pakket {{TRACKING_NUMBER|3SHXQZ0462871}} van {{ORG|Coolblue}} is om 14:07 bezorgd bij de buren op [[A|Kerkstraat 43, 3581 RC Utrecht]], omdat er niemand thuis was op [[A|Kerkstraat 41, 3581 RC Utrecht]]. Je kunt het daar ophalen. Liever een andere keer bezorgd of bij een {{ORG|PostNL}}-punt? Stel je voorkeuren in via de app. Je kunt ook aangeven dat je pakketten nooit bij de buren wilt laten bezorgen."""),
        (Q, "where did my {{ORG|coolblue}} parcel go? it says neighbours but which ones"),
        (A, "It was left with the neighbours at [[A|Kerkstraat 43, 3581 RC Utrecht]] at 14:07, next door to your "
            "address; you can collect it there."),
    ],
    [
        (D, """{{ORG|EDF}} \u2014 \u00e9ch\u00e9ancier {{DATE|2024}}
Madame [[P|Camille Roussel]]
[[A|Appartement 12, 45 boulevard Voltaire
75011 Paris]]

R\u00e9f\u00e9rence client {{ID|6 0042 118 903}}
Vos mensualit\u00e9s passent \u00e0 {{PRICE|86,40 \u20ac}} \u00e0 partir du {{DATE|5 juin}}. Pour toute r\u00e9clamation \u00e9crite : Service Clients, [[A|TSA 20012, 41975 Blois Cedex 9]]. Vous pouvez aussi nous joindre au [[T|01 99 00 41 27]] du lundi au samedi, de 8h \u00e0 20h. Pensez \u00e0 transmettre votre relev\u00e9 de compteur chaque mois pour \u00e9viter une r\u00e9gularisation importante en fin d'ann\u00e9e."""),
        (Q, "Why did [[P|Camille]]'s monthly energy payment go up?"),
        (A, "{{ORG|EDF}} raised [[P|Camille Roussel]]'s monthly instalment to {{PRICE|\u20ac86.40}} from {{DATE|5 June}}, "
            "usually because the previous year's consumption was higher than estimated. She can query it in writing "
            "at [[A|TSA 20012, 41975 Blois Cedex 9]] or by phone on [[T|01 99 00 41 27]]."),
    ],
    [
        (Q, "hola! cambi\u00e9 de piso, mi nueva direcci\u00f3n es [[A|avenida de la constituci\u00f3n 22, 4\u00ba izq, "
            "41001 sevilla]]. soy [[P|marisol quintero]], cliente desde hace a\u00f1os"),
        (A, "\u00a1Gracias, [[P|Marisol]]! He actualizado tu direcci\u00f3n a [[A|Avenida de la Constituci\u00f3n 22, 4\u00ba izq., "
            "41001 Sevilla]]. Los pedidos que ya est\u00e1n en camino se entregar\u00e1n en la direcci\u00f3n anterior."),
    ],
    [
        (D, """Sendungsverfolgung {{TRACKING_NUMBER|00340434161094042557}} \u2014 {{ORG|DHL}}
Empf\u00e4nger: [[P|Lukas Schneider]]
Zustelladresse: [[A|Packstation 118, 04109 Leipzig]]
Ursprungliche Adresse: [[A|Schillerstra\u00dfe 9, 3. OG links, 60313 Frankfurt am Main]]
Status {{DATE|22.05.2024}} 09:14: Die Sendung wurde auf Wunsch des Empf\u00e4ngers an eine Packstation umgeleitet.
Status {{DATE|22.05.2024}} 15:40: Die Sendung liegt in der Packstation zur Abholung bereit. Abholfrist: 7 Tage. Ein Abholcode wurde per E-Mail an [[E|lukas.schneider@example.de]] gesendet."""),
        (Q, "wo ist mein paket? [[P|lukas]]"),
        (A, "Hallo [[P|Lukas]], dein Paket liegt seit {{DATE|22. Mai}}, 15:40 Uhr in der [[A|Packstation 118, 04109 "
            "Leipzig]] bereit. Den Abholcode haben wir an [[E|lukas.schneider@example.de]] geschickt; du hast 7 Tage Zeit."),
    ],
    [
        (D, """Bon de livraison \u2014 {{ORG|Meubles Laurentides}}
Client : [[P|Genevi\u00e8ve Tremblay]]
Adresse : [[A|2190, rue Sainte-Catherine Ouest, app. 705
Montr\u00e9al (Qu\u00e9bec) H3H 1M6]]
T\u00e9l. : [[T|514 555-0171]]
Article : {{PRODUCT|table en ch\u00eane massif Laval}}, {{SKU|SKU ML-3308}}, {{PRICE|1 249,00 $}}
Livraison pr\u00e9vue le {{DATE|mercredi 12 juin}} entre 13 h et 17 h. L'ascenseur de service doit \u00eatre r\u00e9serv\u00e9 aupr\u00e8s de la conciergerie. Second contact sur place : [[P|\u00c9tienne Gagnon]], [[T|+1 (514) 555-0186]]."""),
        (Q, "Can we deliver [[P|Genevi\u00e8ve]]'s table in the morning instead?"),
        (A, "Mornings on {{DATE|12 June}} are full for {{LOCATION|Montr\u00e9al}}. I can offer {{DATE|Thursday 13 June}} "
            "between 8 and 12 at [[A|2190 rue Sainte-Catherine Ouest, app. 705]]; I'll call [[P|Genevi\u00e8ve Tremblay]] "
            "on [[T|514 555-0171]] to confirm, and let [[P|\u00c9tienne]] know."),
    ],
    [
        (Q, "Hi, please send my replacement card to my cottage: [[A|RR 2, 4471 Highway 7, Elmvale, ON L0L 1P0]]. "
            "I'm there until {{DATE|September}}. \u2014 [[P|Graham MacLeod]]"),
        (A, "{{WORD|Will}} do, [[P|Graham]]. The replacement card will go to [[A|RR 2, 4471 Highway 7, Elmvale, ON L0L 1P0]] "
            "by {{ORG|Canada Post}}, usually within 5\u20137 business days; your home address stays on file for statements."),
    ],
    # ---------------------------------------------------------------- UK misc
    [
        (D, """Council tax \u2014 change of circumstances ({{ORG|Glasgow City Council}})
Name: [[P|Stavros Antoniou]]
Moving out of: [[A|Flat 0/2, 112 Dumbarton Road, Glasgow G11 6NX]] on {{DATE|31 May 2024}}
Moving into: [[A|Rose Cottage, Back Lane, Hutton-le-Hole, York YO62 6UA]]
Forwarding phone: [[T|0131 496 0881]]
Single person discount claimed at old address: yes (25%). A final bill for the old address will be issued within 14 days. The new property is in {{LOCATION|Ryedale}}, so register with that council separately. Overpayments are refunded to the bank account that paid the last direct debit."""),
        (Q, "When will [[P|Stavros]] get his final council tax bill?"),
        (A, "The final bill for [[A|Flat 0/2, 112 Dumbarton Road]] is issued within 14 days of {{DATE|31 May}}, the "
            "move-out date. Because [[P|Stavros Antoniou]] is moving to {{LOCATION|North Yorkshire}}, he also needs to "
            "register with {{ORG|Ryedale District Council}}."),
    ],
    [
        (Q, "hi, is [[P|dawn]] in today? she said shed call me back about the boiler service. this is [[P|frank]] "
            "from [[A|flat 3, 9 belmont street, aberdeen ab10 1jr]]"),
        (A, "Hi [[P|Frank]], [[P|Dawn]] is on site visits until 2pm. I've left her a note to call you this afternoon "
            "about the {{PRODUCT|Worcester Bosch}} service at [[A|Flat 3, 9 Belmont Street, Aberdeen AB10 1JR]]."),
    ],
    [
        (D, """Letter received \u2014 scanned by mailroom {{DATE|16/05/2024}}
From: [[P|Rose Adeyinka-Hale]], [[A|PO Box 7781, Belfast BT1 9EL]]
To: Customer Relations, {{ORG|Lough Energy}}

Dear Sir or Madam,
My late father, [[P|Desmond Hale]], held account {{ID|LE-00391827}} for his home at [[A|14 Cyprus Avenue, Belfast BT5 5NT]]. Please close the account from {{DATE|2 May}}, the date of completion of the sale, and send the final bill to me at the PO box above. I have enclosed a copy of the death certificate and the grant of probate. My phone number is [[T|028 9649 6021]].

Yours faithfully,
[[P|Rose Adeyinka-Hale]]"""),
        (Q, "What does [[P|Rose]] need to close her father's account?"),
        (A, "Nothing more: [[P|Rose Adeyinka-Hale]] has sent the death certificate and grant of probate. We'll close "
            "account {{ID|LE-00391827}} from {{DATE|2 May}} and post the final bill to [[A|PO Box 7781, Belfast BT1 9EL]]."),
    ],
    [
        (Q, "Hello, I'm [[P|Shirin Rahimi]]. My son [[P|Kian]] is starting nursery in {{DATE|September}}; can you tell me "
            "if the 30 free hours apply to us? We live at [[A|26 Woodstock Road, Oxford OX2 6HT]]."),
        (A, "Hi [[P|Shirin]], [[P|Kian]] can get 30 free hours from the term after he turns three, as long as both "
            "parents each earn at least the equivalent of 16 hours a week at minimum wage. Apply through the "
            "{{PRODUCT|Childcare Service}} and give the nursery your eligibility code before {{DATE|31 August}}."),
    ],
    [
        (D, """Complaint {{ID|CMP-11842}} \u2014 {{ORG|Thameslink}} delay repay
Passenger: [[P|Youssef El Amrani]]
Email: [[E|youssef.elamrani@example.co.uk]]
Journey: {{LOCATION|Luton Airport Parkway}} to {{LOCATION|London St Pancras}}, {{DATE|Friday 10 May}}, 18:42 service
Delay: 47 minutes (signalling fault at {{LOCATION|Kentish Town}})
Ticket: Anytime Single, {{PRICE|\u00a321.90}}, paid with card [[C|6011 0009 9013 9424]]
Compensation due: 50% of the single fare ({{PRICE|\u00a310.95}}). Refund method requested: back to the card used. Claim received within 28 days; eligible."""),
        (Q, "How much delay repay will [[P|Youssef]] get?"),
        (A, "[[P|Youssef El Amrani]]'s train was 47 minutes late, which qualifies for 50% of the single fare: "
            "{{PRICE|\u00a310.95}}, refunded to the card he paid with within about 5 working days."),
    ],
    [
        (D, """Payment gateway \u2014 failed charges, {{DATE|20 May 2024}} (unmasked in error; purge after review)
txn {{ID|ch_3PI8kQ}} card [[C|6011111111111117]] {{PRICE|$64.00}} declined: insufficient_funds
txn {{ID|ch_3PI8mX}} card [[C|371449635398431]] {{PRICE|$1,290.00}} declined: do_not_honor
txn {{ID|ch_3PI8pB}} card [[C|3530111333300000]] {{PRICE|\u00a588,000}} declined: expired_card
txn {{ID|ch_3PI8rT}} card [[C|30569309025904]] {{PRICE|$12.99}} declined: incorrect_cvc
txn {{ID|ch_3PI8vL}} card [[C|6200000000000005]] {{PRICE|CNY 599}} declined: card_not_supported
Client IP for the last one: [[IP|203.0.113.54]]
Action: engineering to fix the logger that wrote full card numbers ({{ID|JIRA PAY-2231}}) and purge this file."""),
        (Q, "why are full card numbers showing in the failed charges export?"),
        (A, "A logger in the payment service wrote unmasked card numbers for declined charges on {{DATE|20 May}}. "
            "It's tracked as {{ID|PAY-2231}}; the export should be purged once engineering ships the fix, and "
            "nobody should forward it in the meantime."),
    ],
    [
        (Q, "hi, paid for the {{PRODUCT|premium}} upgrade with [[C|2223 0031 2200 3222]] but the app still says free. "
            "account is [[E|blessing.amankwah@example.com]]"),
        (A, "Thanks [[P|Blessing]] \u2014 the payment went through but the upgrade didn't sync to your account "
            "[[E|blessing.amankwah@example.com]]. I've applied {{PRODUCT|Premium}} manually; sign out and back in to see it."),
    ],
    [
        (Q, "Could you set up a payment plan? Card is [[C|4000 0566 5566 5556]], name [[P|Wanjiru Kamau]], billing "
            "address [[A|Apartment 4B, Riverside Gardens, 17 Riverside Drive, Nairobi]]. I owe {{PRICE|KES 48,000}}."),
        (A, "I can split the {{PRICE|KES 48,000}} into four monthly payments of {{PRICE|KES 12,000}}, [[P|Wanjiru]], "
            "charged to the card you gave on the {{DATE|5th}} of each month from {{DATE|June}}. Please confirm and "
            "I'll send the agreement to you to sign."),
    ],
    [
        (Q, "pls whitelist my home ip [[IP|192.0.2.150]] for the admin panel, im working remote this week. "
            "[[P|kenji]]"),
        (A, "Done, [[P|Kenji]]: [[IP|192.0.2.150]] is allowed on the admin panel until {{DATE|Friday}} 23:59. "
            "After that it's removed automatically; use the {{PRODUCT|VPN}} if you need longer."),
    ],
    [
        (D, """#deploy channel export, {{DATE|21 May}}
[[P|yui.takahashi]]: rolled {{PRODUCT|checkout-service}} to {{VERSION|2.18.0}}
[[P|zhang.wei]]: seeing 401s from the payments API in staging
[[P|yui.takahashi]]: my bad, pasted the old key. new one: STRIPE_SECRET_KEY=[[S|sk_test_51Hx9QeLm2Vp8Tz4Kw7Nc3Rb6Yd0Fg5Aj]]
[[P|zhang.wei]]: works now. please rotate that, it's in slack forever
[[P|yui.takahashi]]: rotating. also set the webhook secret to [[S|whsec_9fK2mQ7xLp4RvT1zB8nC3dW6]]
[[P|li.mei]]: reminder: secrets go in {{PRODUCT|Vault}}, not here. opening {{ID|SEC-118}}
[[P|yui.takahashi]]: ack, both rotated in the dashboard, redeploying staging now
[[P|zhang.wei]]: staging green again"""),
        (Q, "Which secrets were pasted into #deploy and who needs to rotate them?"),
        (A, "Two: the staging {{ORG|Stripe}} secret key and the webhook signing secret, both pasted by "
            "[[P|Yui Takahashi]]. She is rotating them; [[P|Li Mei]] opened {{ID|SEC-118}} to track it."),
    ],
    [
        (D, """CI job {{ID|#88412}} failed ({{PRODUCT|GitHub Actions}}, {{DATE|2024-05-19}})
Step 'Publish image' printed the environment:
AWS_ACCESS_KEY_ID=[[S|AKIAQ4XN7R2LW8PZ3KTE]]
AWS_SECRET_ACCESS_KEY=[[S|rT8v/Kp2Lw9xQm4Zs7Nb1Hc5Jd3Fy6Ge0Ua+WkXo]]
AWS_REGION=eu-west-2
Triggered by [[P|Kenji Matsumoto]] ([[E|kenji.matsumoto@example.jp]]) on branch release/{{VERSION|3.4}}. The job runs on the self-hosted runner at [[IP|10.20.4.17]]; its logs are kept for 90 days and readable by every member of the organisation. The step should have used the masked secrets store; the workflow file was changed in the same pull request that bumped the base image."""),
        (Q, "Is the leaked AWS key from the failed CI job still active?"),
        (A, "Treat it as active until it's deactivated: the access key was printed in job {{ID|#88412}}'s log, which "
            "the whole organisation can read. Ask [[P|Kenji Matsumoto]] or the cloud team to deactivate it in IAM, "
            "then delete the log."),
    ],
    [
        (D, """HR case note \u2014 {{ID|ER-2024-031}}, confidential
Employee: [[P|Khalid Al-Mansouri]], {{JOB_TITLE|Field Service Engineer}}, {{LOCATION|Birmingham}} depot
NI number: [[NINO|RH 58 39 20 A]]; DOB [[DOB|11 March 1986]]
Home: [[A|31 Wake Green Road, Moseley, Birmingham B13 9PA]]
Issue: raised a grievance on {{DATE|8 May}} about overtime allocation. Meeting held {{DATE|15 May}} with [[P|Omar Haddad]] ({{JOB_TITLE|Depot Manager}}) and [[P|Victoria Ashby]] (HR). Outcome letter due {{DATE|22 May}}; the employee may appeal within 5 working days to [[P|Kamal Siddiqui]], {{JOB_TITLE|Regional Director}}."""),
        (Q, "Who hears [[P|Khalid]]'s appeal if he isn't happy with the outcome?"),
        (A, "The appeal goes to [[P|Kamal Siddiqui]], the regional director, and [[P|Khalid Al-Mansouri]] has five "
            "working days from the outcome letter (due {{DATE|22 May}}) to lodge it."),
    ],
    [
        (Q, "can you book me a table for 4 at 7:30 on saturday, name's [[P|bao nguyen]], number [[T|+44 20 7946 0713]]"),
        (A, "Booked: a table for four at 19:30 on {{DATE|Saturday}} under [[P|Bao Nguyen]]. We'll text "
            "[[T|+44 20 7946 0713]] a reminder on the day; let us know if anyone has allergies."),
    ],
    [
        (D, """Visitor log \u2014 {{ORG|Harlow Science Park}}, reception B, {{DATE|Thursday 23 May}}
08:52 [[P|Ph\u1ea1m Thu H\u00e0]] ({{ORG|Nordstrand Biotech}}), host [[P|Jo\u00e3o Figueiredo]], badge {{ID|V-2231}}
09:10 [[P|Stelios Markou]] (contractor, {{ORG|Kemp Electrical}}), host Facilities, badge {{ID|V-2232}}
09:35 [[P|Grace Obeng]] (interview), host [[P|Joanna Wilde]], badge {{ID|V-2233}}
10:02 [[P|Hugo Lindgren]] ({{ORG|Amesbury Capital}}), host [[P|Jo\u00e3o Figueiredo]], badge {{ID|V-2234}}
All visitors signed the NDA on the tablet. Parking permits issued for bays 12\u201315. Fire marshal today: [[P|Joanna Wilde]]."""),
        (Q, "who did [[P|jo\u00e3o]] have visiting this morning?"),
        (A, "[[P|Jo\u00e3o Figueiredo]] hosted two visitors: [[P|Ph\u1ea1m Thu H\u00e0]] from {{ORG|Nordstrand Biotech}} at "
            "08:52 and [[P|Hugo Lindgren]] from {{ORG|Amesbury Capital}} at 10:02."),
    ],
    [
        (Q, "pls change the contact on our account from [[P|pat]] to [[P|Jack Okoro]], his mobile is "
            "[[T|+44 (0) 7700 900 358]] and email [[E|jack.okoro@brightline.example]]"),
        (A, "Done \u2014 [[P|Jack Okoro]] is now the main contact, reachable on [[T|+44 (0) 7700 900 358]] and "
            "[[E|jack.okoro@brightline.example]]. [[P|Pat]] stays on the account as a secondary contact unless you "
            "want him removed."),
    ],
    [
        (Q, "{{WORD|Will}} the refund go back to my {{PRODUCT|PayPal}} or to the card? I paid {{PRICE|\u20ac74}} for "
            "{{ID|order 55-20931}}."),
        (A, "Refunds always go back the way you paid, so the {{PRICE|\u20ac74}} for {{ID|order 55-20931}} returns to "
            "your {{PRODUCT|PayPal}} balance, usually within a day of us processing the return."),
    ],
    [
        (D, """Shift handover \u2014 {{ORG|Northgate Care Home}}, night to day, {{DATE|19 May}}
Room 4, Mrs [[P|Doreen Pryce]]: settled; took {{DRUG|paracetamol}} 1 g at 02:00 for hip pain. Daughter [[P|Carol]] visiting at 11.
Room 7, Mr [[P|Alistair Munro]]: up twice, confused at 03:30, reoriented by [[P|Precious]]. Fluids encouraged.
Room 9, Mrs [[P|Aurelia Santos]]: no concerns. GP review today re {{DRUG|amoxicillin}} course.
Handover given by [[P|Precious Dube]], {{JOB_TITLE|Senior Carer}}, to [[P|Hope Adjei]]. Incident forms: none. Fridge temperature logged at 4\u00b0C."""),
        (Q, "how was [[P|alistair]] overnight?"),
        (A, "Mr [[P|Munro]] was up twice and briefly confused at 03:30; [[P|Precious]] reoriented him and encouraged "
            "fluids. Nothing else was reported."),
    ],
    [
        (D, """{{ORG|Lakeshore Family Medicine}} \u2014 patient statement
Patient: [[P|Marcus Delaney]]   DOB [[DOB|08/14/1969]]
Guarantor: [[P|Teresa Delaney]], SSN [[SSN|274-51-8836]]
Address: [[A|3158 Elm Street, Apt 2, Dayton, OH 45406]]
Date of service {{DATE|04/22/2024}}: office visit {{PRICE|$185.00}}; lab panel {{PRICE|$96.40}}
Insurance paid ({{ORG|Buckeye Health Plan}}): {{PRICE|$203.12}}
Balance due: {{PRICE|$78.28}} by {{DATE|06/15/2024}}
Pay online, or call billing at [[T|(937) 555-0148]], Monday to Friday 8\u20134:30.
Card payment attempted by phone on {{DATE|05/03/2024}}: [[C|4000 0007 6000 0002]], declined."""),
        (Q, "can i pay the rest of my dad's bill with a different card? [[C|5105 1051 0510 5100]]"),
        (A, "Yes \u2014 I've charged {{PRICE|$78.28}} to the new card, so the balance for [[P|Marcus Delaney]] is now "
            "zero. A receipt will be mailed to [[A|3158 Elm Street, Apt 2, Dayton, OH 45406]]; the declined attempt "
            "from {{DATE|May 3}} won't appear on any statement."),
    ],
    [
        (Q, "hey my ssn is [[SSN|452-87-1190]] and my wife's is [[SSN|391-26-7045]], do u need anything else for the "
            "tax forms? - [[P|Terrence Abara]]"),
        (A, "Thanks, [[P|Terrence]]. That's everything for the 1040; please don't send Social Security numbers by "
            "chat again \u2014 I've removed them from this conversation. Your return will be ready to sign by "
            "{{DATE|April 10}}."),
    ],
    [
        (D, """P60 \u2014 end of year certificate, tax year to {{DATE|5 April 2024}}
Employer: {{ORG|Calder Valley Foods Ltd}}, PAYE reference {{ID|120/CV44819}}
Employee: [[P|Bethany Okonedo]]
National Insurance number: [[NINO|NH 73 52 09 B]]
Works number: {{ID|4471}}
Pay in this employment {{PRICE|\u00a331,480.00}}; tax deducted {{PRICE|\u00a33,782.40}}
Final tax code 1257L. Employee's National Insurance contributions: {{PRICE|\u00a31,988.16}}.
Keep this certificate in a safe place: you'll need it to check your tax, claim tax credits or apply for a mortgage. Questions about it go to the payroll team, not to {{ORG|HMRC}}."""),
        (Q, "[[P|bethany]] says her P60 has the wrong NI number, she thinks it should be [[NINO|NH735209C]]"),
        (A, "I'll check [[P|Bethany Okonedo]]'s record against {{ORG|HMRC}}'s; if the suffix letter is wrong we'll "
            "correct it on the next FPS submission and issue a replacement P60 within 10 working days."),
    ],
    [
        (D, """Climbing roses for walls and fences ({{ORG|Hollybank Nurseries}} guide)
{{PRODUCT|Dawn Chorus}} is a vigorous apricot climber that copes with partial shade and flowers from {{DATE|June}} until the first frosts. {{PRODUCT|Grace}} is a compact English shrub rose with a warm scent; trained on a low fence it reaches about 1.5 m. {{PRODUCT|Joy of Life}} is the one for a north-facing wall, with clear pink blooms and good disease resistance. Bare-root plants are sent out from {{DATE|November}} to {{DATE|March}} and cost {{PRICE|\u00a316.99}}; potted roses ship all year from {{PRICE|\u00a324.99}}. {{WORD|Frank}} advice from our growers: feed in spring, water deeply in dry spells, and don't prune climbers hard in their first year."""),
        (Q, "is {{PRODUCT|grace}} or {{PRODUCT|dawn chorus}} better for a north facing wall?"),
        (A, "Neither is ideal: {{PRODUCT|Dawn Chorus}} tolerates partial shade but {{PRODUCT|Joy of Life}} is the guide's "
            "pick for a north-facing wall. {{PRODUCT|Grace}} is better kept to a sunny low fence."),
    ],
    [
        (Q, "flat tyre on the {{LOCATION|M6}} just past {{LOCATION|junction 14}}, hard shoulder. {{WORD|Jack}} is missing "
            "from the boot. im [[P|paulina nowicka]], membership {{ID|RG-5582190}}, phone [[T|07700 900 477]]"),
        (A, "Help is on the way, [[P|Paulina]]. A patrol will reach you in about 40 minutes and will call "
            "[[T|07700 900 477]] when close. Please wait behind the barrier, away from the car, with your hazard lights on."),
    ],
    [
        (Q, "Please refund the duplicate charge on [[C|4111 1111 1111 1111]] and the one on my husband's card "
            "[[C|36227206271667]]; both were for {{ID|booking HT-30917}}. \u2014 [[P|Aleksandra Petrova]]"),
        (A, "I've refunded the duplicate {{PRICE|\u20ac312.00}} to both cards for {{ID|booking HT-30917}}, "
            "[[P|Aleksandra]]. Each refund takes 5\u201310 business days to appear, depending on the bank."),
    ],
]
