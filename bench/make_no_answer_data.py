"""Write bench/data/no_answer.jsonl: refusals and real answers for the no-answer detector.

    python bench/make_no_answer_data.py

Hand-written templates filled with hand-written topics (a support assistant's questions, with a
true statement, a negative statement and a part the documents do not cover). The latest kinds
(`*_composed`) are composed: a core (the template) between an opener and a closer that refusals,
answers and failed actions share ("Sorry, ", "Good question. ", " I hope that helps."), so that
only what the core says tells a refusal from an answer. The next pair (`*_fresh`, on fourteen
topics of its own and a seed of its own) brings fresh wordings, written for this project: refusals
worded as no earlier template is (hedged, restating the question, "**Not found.**", "We don't
have ...") against answers in those words. Two more pairs, each again on fourteen topics and a
seed of its own, bring registers: an enterprise assistant's (`*_workplace`: formal, ticket-like,
"Searched Confluence for ...: 0 relevant pages", deferring to the owning team) and a consumer
chatbot's (`*_chatty`: casual, a preamble and an offer of other help), each answering in the tone
it declines in. Each row says its `kind`, `template` and `topic`, so that
training/claim_support/build_data.py (--no-answer) can split train, dev and test by both: no test
row shares a template with a training row, and 30% of the topics are left out of training (the
test rows on them are "unseen topics").

Labels: `no_answer` (the assistant declines: blames the sources, says the context is not enough,
declines with or without "sorry", a short "nothing came up") and `answer` (real answers, many of
them negative or apologetic, some in a refusal's words ("I checked the manual: instalments are not
offered on clearance items."), and partial answers that decline one part: those are "incomplete",
not "no_answer"; short answers; answers that cite their sources; how-to answers in steps; and
reports that an action the user asked for failed, "Sorry, I couldn't cancel order 77: the order
service timed out": the assistant answered, the tool failed, which the tool-call metrics count).
Written for this project; no benchmark text is used.
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

OUT = Path(__file__).parent / "data" / "no_answer.jsonl"

# subject (a noun phrase), question, yes (a true statement), no (a negative statement),
# missing (a part the documents do not cover, for partial answers)
TOPICS = [
    ("shipping to Antarctica", "Do you ship to Antarctica?",
     "orders to remote regions ship by freight within 20 working days",
     "the store does not ship to Antarctica", "the freight cost"),
    ("the refund window", "How long do I have to ask for a refund?",
     "refunds can be requested within 30 days of delivery",
     "refunds are not available after 30 days", "refunds for gift cards"),
    ("phone support on the Basic plan", "Does the Basic plan include phone support?",
     "phone support comes with the Pro and Enterprise plans",
     "the Basic plan does not include phone support", "weekend phone hours"),
    ("the late payment fee", "Is there a fee if I pay my invoice late?",
     "a late fee of 5 euros applies after 14 days", "no fee is charged in the first 14 days",
     "whether the fee is refundable"),
    ("parking at the Lyon office", "Can visitors park at the Lyon office?",
     "visitors can use the underground car park on level -2",
     "there are no reserved visitor spaces at the Lyon office", "the hourly rate"),
    ("the API rate limit", "What is the API rate limit?",
     "the API accepts 600 requests per minute per key",
     "the free tier does not allow more than 60 requests per minute", "burst limits"),
    ("data retention for deleted accounts", "How long is data kept after I delete my account?",
     "data from deleted accounts is erased after 90 days",
     "backups are not kept beyond 90 days", "log retention"),
    ("the warranty on refurbished laptops", "Are refurbished laptops under warranty?",
     "refurbished laptops carry a 12-month warranty",
     "the warranty does not cover batteries on refurbished laptops", "accidental damage"),
    ("changing the delivery address", "Can I change the delivery address after ordering?",
     "the address can be changed until the order is packed",
     "you cannot change the address once the parcel has shipped", "changes for express orders"),
    ("student discounts", "Do you offer a student discount?",
     "students get 20 percent off with a valid student card",
     "the student discount does not apply to sale items", "discounts for teachers"),
    ("the pet policy in hotel rooms", "Are pets allowed in the rooms?",
     "dogs under 10 kg are welcome for a fee of 15 euros a night",
     "cats are not allowed in the rooms", "service animals in the spa"),
    ("two-factor authentication", "How do I turn on two-factor authentication?",
     "two-factor authentication is under Settings, Security, Enable 2FA",
     "SMS codes are not supported, only authenticator apps", "hardware keys"),
    ("exporting invoices to CSV", "Can I export my invoices as CSV?",
     "invoices can be exported as CSV from the Billing page",
     "the export does not include invoices older than 24 months", "the column format"),
    ("the minimum order for free delivery", "What is the minimum order for free delivery?",
     "delivery is free for orders over 50 euros",
     "free delivery does not apply to furniture", "delivery to islands"),
    ("the gym's opening hours on holidays", "Is the gym open on public holidays?",
     "the gym opens from 8 am to 2 pm on public holidays",
     "the gym is not open on Christmas Day", "the pool hours"),
    ("cancelling a flight booking", "Can I cancel my flight booking for free?",
     "bookings can be cancelled free of charge within 24 hours",
     "Light fares are not refundable after 24 hours", "taxes on cancelled tickets"),
    ("the maximum file upload size", "What is the largest file I can upload?",
     "files up to 2 GB can be uploaded", "files larger than 2 GB are not accepted",
     "limits for shared folders"),
    ("overtime pay for part-time staff", "Do part-time employees get overtime pay?",
     "part-time staff are paid 25 percent extra beyond their contracted hours",
     "overtime does not apply to hours swapped with a colleague", "night shifts"),
    ("the loyalty points expiry", "When do my loyalty points expire?",
     "loyalty points expire 18 months after they are earned",
     "points do not carry over when an account is closed", "points from partner shops"),
    ("vaccinations for travel to Kenya", "Which vaccines do I need for Kenya?",
     "a yellow fever certificate is required when arriving from a risk country",
     "no vaccine is mandatory for travellers arriving from Europe", "malaria tablets"),
    ("the SLA uptime", "What uptime does the SLA guarantee?",
     "the SLA guarantees 99.9 percent monthly uptime",
     "planned maintenance does not count against the SLA", "service credits"),
    ("replacing a lost library card", "How do I replace a lost library card?",
     "a lost card is replaced at the front desk for 3 euros",
     "the old card cannot be reactivated once it is reported lost", "online renewals"),
    ("the mortgage early repayment penalty", "Is there a penalty for repaying my mortgage early?",
     "early repayment costs 1 percent of the amount repaid",
     "there is no penalty after the fifth year", "partial repayments"),
    ("running the app offline", "Does the app work offline?",
     "notes and tasks are available offline and sync when you reconnect",
     "video calls do not work offline", "offline maps"),
    ("tenant rights on rent increases", "How much can my landlord raise the rent?",
     "rent can rise at most once a year, in line with the reference index",
     "the landlord cannot raise the rent during the first year", "furnished flats"),
    ("the chemistry course prerequisites", "What do I need before taking Chemistry 201?",
     "Chemistry 201 requires Chemistry 101 with a grade of C or better",
     "Chemistry 201 is not open to first-year students", "lab safety training"),
    # Knowledge questions whose short answer is a name, a place or a date: real answers that
    # look like nothing but an entity ("Grace B. Hopper.").
    ("the first published algorithm", "Who wrote the first published algorithm?",
     "Ada Lovelace published the first algorithm in 1843",
     "Charles Babbage did not publish the algorithm himself", "the algorithm's purpose"),
    ("the first compiler", "Who wrote the first compiler?",
     "Grace B. Hopper wrote the A-0 compiler in 1952",
     "the first compiler was not written at IBM", "its instruction set"),
    ("the director of Vertigo", "Who directed Vertigo?",
     "Vertigo was directed by Alfred Hitchcock", "James Stewart did not direct Vertigo",
     "the budget"),
    ("the capital of Australia", "What is the capital of Australia?",
     "the capital of Australia is Canberra", "Sydney is not the capital",
     "when it was founded"),
    ("the museum's founder", "Who founded the city museum?",
     "the museum was founded by Dr. Maria K. Osei", "the city council did not found it",
     "the founding year"),
    ("the company headquarters", "Where is the company headquartered?",
     "the headquarters are in Rotterdam, the Netherlands",
     "the company is not headquartered in Amsterdam", "the number of employees"),
    ("the festival date", "When does the spring festival take place?",
     "the spring festival takes place in May", "the festival is not held in April",
     "ticket prices"),
    ("the treaty signing", "When was the treaty signed?",
     "the treaty was signed on 3 March 1921", "the treaty was not signed in 1920",
     "who ratified it"),
]

# A short real answer per topic, in TOPICS order.
SHORT = ["Yes, by freight", "30 days", "No, only Pro and Enterprise", "5 euros after 14 days",
         "Yes, level -2", "600 requests a minute", "90 days", "12 months", "Until it is packed",
         "20 percent off", "Dogs under 10 kg only", "Settings, then Security", "Yes, as CSV",
         "50 euros", "8 am to 2 pm", "Within 24 hours", "2 GB", "Yes, 25 percent extra",
         "After 18 months", "Yellow fever, sometimes", "99.9 percent", "3 euros at the desk",
         "1 percent", "Mostly, yes", "Once a year", "Chemistry 101",
         "Ada Lovelace", "Grace B. Hopper", "Alfred Hitchcock", "Canberra", "Dr. Maria K. Osei",
         "Rotterdam", "In May", "3 March 1921"]

SOURCES = ["the knowledge base", "the documents", "the retrieved pages", "our help center",
           "the provided context", "the search results", "the manual", "the policy documents",
           "the FAQ", "the sources I was given"]

# Refusals: {subject}, {source}. Grouped by the way they decline.
REFUSALS = {
    "blames_sources": [
        "{Source} has nothing on {subject}.",
        "None of the retrieved pages cover {subject}.",
        "{Source} doesn't mention {subject} anywhere.",
        "I looked through {source}, but {subject} isn't covered there.",
        "There's nothing about {subject} in {source}.",
        "{Source} says nothing about {subject}, so I can't give you an answer.",
        "The articles I found are about other things; none of them address {subject}.",
        "Nothing in {source} speaks to {subject}.",
        "{Source} doesn't include any details on {subject}.",
        "I searched {source} and came up empty on {subject}.",
        "The passages returned for this question don't touch on {subject} at all.",
        "No document I have access to discusses {subject}.",
        "{subject} is not something {source} covers.",
        "The retrieved material is silent on {subject}.",
        "Unfortunately {source} contains no information on {subject}.",
    ],
    "context_insufficient": [
        "The context I was given isn't enough to answer this.",
        "The information provided is insufficient to determine {subject}.",
        "I don't have enough context to answer a question about {subject}.",
        "Based on the available excerpts, it's impossible to say anything about {subject}.",
        "The supplied passages don't contain what's needed to answer that.",
        "There isn't sufficient information in {source} to answer reliably.",
        "With only these documents I can't work out {subject}.",
        "The excerpts are too limited to draw any conclusion about {subject}.",
        "I lack the details required to answer this question.",
        "My sources don't go far enough to answer about {subject}.",
    ],
    "declines_plainly": [
        "I can't help with {subject}.",
        "That's not something I'm able to answer.",
        "I'm not able to say.",
        "I won't be able to answer that one.",
        "That question is outside what I can answer.",
        "I don't know anything about {subject}.",
        "I have no answer for that.",
        "I'm unable to provide an answer about {subject}.",
        "Answering that is beyond what I can do here.",
        "I don't have an answer regarding {subject}.",
        "I can't tell you that.",
        "I have no comment.",
        "That's not a question I can answer for you.",
        "I cannot give you a reliable answer on {subject}.",
    ],
    "apologises": [
        "Sorry, I couldn't find anything about {subject}.",
        "I'm sorry, but I don't know.",
        "Apologies, I wasn't able to locate any information on {subject}.",
        "Sorry, I don't have that information.",
        "I'm afraid I can't find an answer about {subject} in {source}.",
        "Unfortunately I don't know the answer to that.",
        "Sorry, that isn't covered in {source}.",
        "I'm sorry, I have no details about {subject}.",
        "Regrettably, I couldn't find what you're looking for.",
        "My apologies, {source} doesn't have an answer to this.",
    ],
    "redirects": [
        "I don't have that information; please contact the support team about {subject}.",
        "You'd need to ask a human agent about {subject}, I can't answer it.",
        "Please check with customer service, I have no information on {subject}.",
        "For {subject}, I'd suggest reaching out to your account manager, since I can't find it.",
        "I can't answer that, but the support desk should be able to help you with {subject}.",
        "That's best answered by our staff; I have nothing on {subject}.",
        "I'm not the right place for questions about {subject}; try the help desk.",
        "Best to call the office directly, as I don't have details on {subject}.",
        "I can't find that, but a colleague at the front desk will know about {subject}.",
        "Try opening a ticket with support; {source} doesn't tell me about {subject}.",
    ],
    "short": [
        "Nothing came up.",
        "No results.",
        "No info.",
        "Nothing found.",
        "No idea.",
        "Not sure.",
        "Unknown.",
        "N/A",
        "No data on that.",
        "Couldn't find it.",
        "Can't say.",
        "No clue, sorry.",
        "Nothing on {subject}.",
        "No match in {source}.",
        "Don't know.",
        "(no answer)",
        "No answer available.",
        "Search returned nothing.",
    ],
    "other_language": [
        "Je n'ai trouvé aucune information sur ce sujet dans les documents.",
        "Lo siento, no encuentro nada sobre eso en la base de conocimiento.",
        "Dazu habe ich in den Unterlagen leider nichts gefunden.",
        "Non ho informazioni su questo argomento.",
        "Não encontrei nada sobre isso nos documentos.",
        "Désolé, je ne peux pas répondre à cette question.",
    ],
}

# Real answers: {yes}, {no}, {missing}, {source}.
ANSWERS = {
    "negative": [
        "No, {no}.",
        "No. {No}.",
        "Unfortunately, {no}.",
        "Sorry, but {no}.",
        "I'm afraid {no}.",
        "Sadly no: {no}.",
        "Not quite. {No}, although {yes}.",
        "No, and to be clear, {no}.",
        "Unfortunately not. {No}.",
        "I'm sorry to say that {no}.",
        "According to {source}, {no}.",
        "That isn't possible: {no}.",
        "Sorry, no. {No}.",
        "Short answer: no. {No}.",
    ],
    "apologetic_yes": [
        "Unfortunately, yes: {yes}.",
        "Yes, sorry: {yes}.",
        "I'm afraid so. {Yes}.",
        "Sadly yes, {yes}.",
        "Unfortunately yes. {Yes}, and {no}.",
        "Sorry for the bad news, but {yes}.",
    ],
    "positive": [
        "Yes, {yes}.",
        "{Yes}.",
        "Good news: {yes}.",
        "According to {source}, {yes}.",
        "{Yes}. {No}.",
        "Sure! {Yes}.",
        "Here is what {source} says: {yes}.",
        "In short, {yes}.",
        "{Yes}; note that {no}.",
        "Yes. {Yes}. Let me know if you need anything else.",
        "- {Yes}\n- {No}",
        "1. {Yes}.\n2. {No}.",
    ],
    "short_answer": [
        "{Short}.",
        "{Short}, according to {source}.",
        "{Short}!",
        "Answer: {short}.",
        "{Short} (see {source}).",
        "It's {short}.",
    ],
    "cites_sources": [
        "{Source} covers this: {yes}.",
        "The documents mention that {yes}.",
        "As the retrieved pages explain, {yes}.",
        "{Source} is clear on {subject}: {yes}.",
        "I found it in {source}. {Yes}.",
        "Per {source}, {yes}; it also notes that {no}.",
        "The page on {subject} says {yes}.",
        "Based on the context provided, {no}.",
    ],
    "partial": [
        "{Yes}. {Source} doesn't say anything about {missing}, though.",
        "{Yes}. I couldn't find information on {missing}.",
        "Partly: {yes}. I don't know about {missing}.",
        "{Yes}, but {missing} isn't covered in {source}.",
        "{No}. As for {missing}, there's nothing in {source}.",
        "Here's what I found: {yes}. I have no details on {missing}.",
        "{Yes}. Sorry, I can't answer the part about {missing}.",
        "No, {no}. I'm not sure about {missing}.",
    ],
}


# Requests for an action (an agent's tool call) and why it failed: topic, request, the action
# (an infinitive phrase), the failure's reason.
ACTIONS = [
    ("cancelling an order", "Cancel order 77.", "cancel order 77", "the order service timed out"),
    ("changing a delivery address", "Change the delivery address on order 512 to 4 Elm Street.",
     "change the delivery address", "the parcel has already been handed to the courier"),
    ("issuing a refund", "Refund my last payment.", "issue the refund",
     "the payment provider rejected the request"),
    ("resetting a password", "Reset my password, please.", "reset your password",
     "the account service is not responding"),
    ("booking a meeting room", "Book room B for 3 pm tomorrow.", "book room B",
     "the calendar system returned an error"),
    ("upgrading a plan", "Upgrade me to the Pro plan.", "upgrade your plan",
     "the billing system is unavailable"),
    ("sending an invoice", "Email me invoice INV-7.", "send invoice INV-7",
     "the mail server refused the message"),
    ("renewing library loans", "Renew my library books.", "renew your loans",
     "the library system is down for maintenance"),
    ("opening a support ticket", "Open a ticket about my broken screen.", "open the ticket",
     "the ticketing tool timed out"),
    ("pausing a subscription", "Pause my subscription for a month.", "pause your subscription",
     "the subscription service returned an error"),
    ("unlocking an account", "Unlock my account.", "unlock your account",
     "the identity service did not answer"),
    ("transferring money", "Transfer 200 euros to my savings account.", "make the transfer",
     "the bank's payment system is temporarily unavailable"),
]

# Answers reporting that the action failed: {do}, {reason}. Answers, not refusals.
ACTION_FAILED = [
    "Sorry, I couldn't {do}: {reason}.",
    "I tried to {do}, but it didn't go through.",
    "Unfortunately the attempt to {do} failed because {reason}.",
    "I wasn't able to {do}; {reason}. Please try again later.",
    "That didn't work: {reason}, so I could not {do}.",
    "Sorry, something went wrong and I couldn't {do}.",
    "I'm afraid I could not {do} right now.",
    "The request to {do} failed. {Reason}.",
    "I attempted to {do} but got an error: {reason}.",
    "Sorry, I was unable to {do} at this time. You can try again in a few minutes.",
    "It didn't work, sorry: {reason}.",
    "My attempt to {do} was rejected: {reason}.",
]


# Small talk answered in kind: "Hi?" / "Hello." is a reply, not a refusal (short replies were
# what the embedder of the all-MiniLM detector confused with "Nothing came up.").
SMALL_TALK = ["Hello.", "Hi there!", "Hello! How can I help you today?", "You're welcome!",
              "Good morning to you too.", "Thanks, you too!", "Glad I could help.", "Goodbye!",
              "Have a nice day!", "Hi! What can I do for you?", "Sure.", "Of course!"]
# A name, place, date or figure alone answers a who/where/when question: an earlier detector took
# "Dr. Maria K. Osei." and "Michael Mann." for refusals.
ENTITIES = ["Michael Mann.", "Priya Natarajan.", "Porto.", "In 1843.", "Ada Lovelace.",
            "Chiamaka Okafor.", "Nguyen Van An.", "Ahmed Al-Sayed.", "Mount Kilimanjaro.",
            "Sao Paulo, Brazil.", "On 4 July 1776.", "About 3.5 million.", "Oslo.", "42.",
            "Björn Lindqvist.", "Kenji Watanabe.", "The Louvre.", "Zhang Wei.", "1971.",
            "Fatima Zahra.", "Ravi Shankar.", "Lake Titicaca.", "12 euros a month.", "Seven days.",
            "Rosalind Franklin.", "General Electric.", "Buenos Aires.", "Olumide Adeyemi."]
ENTITY_QUESTIONS = ["Who directed it?", "Where is it?", "When did it happen?", "How many were there?",
                    "Who is the manager?", "Which company made it?", "What is the price?",
                    "Who founded it?"]
GREETINGS = ["Hi?", "Hello", "Thanks!", "Good morning", "Thank you so much", "Bye",
             "Have a good one", "Hey there"]


# How-to answers (a procedure in steps): what to do, the question, two steps, a caution and what
# to wait for. A support assistant's most common answer, and one the detector had not seen: it
# read "Hold the reset button ... then let it restart" as half a refusal.
HOW_TO_TOPICS = [
    ("update the app", "How do I update the mobile app?", "open the app's page in the store",
     "tap Update", "updates over 50 MB need Wi-Fi", "the progress bar fills"),
    ("pair the headphones", "How do I pair my headphones?",
     "hold the power button for five seconds", "pick the headphones in your phone's Bluetooth list",
     "only one phone can be paired at a time", "the light flashes blue"),
    ("export my invoices", "How can I export my invoices?", "go to Billing > Invoices",
     "choose Export and pick CSV or PDF", "an export covers at most 24 months",
     "the download starts"),
    ("clean the filter", "How do I clean the coffee machine's filter?",
     "take the filter out from under the water tank", "rinse it under warm water for a minute",
     "the filter must not go in the dishwasher", "the water runs clear"),
    ("turn on two-factor authentication", "How do I turn on two-factor authentication?",
     "open Account > Security", "scan the QR code with your authenticator app",
     "you should keep the backup codes somewhere safe", "the app shows a six-digit code"),
    ("change the ink cartridge", "How do I change the ink cartridge?",
     "lift the scanner lid until it locks", "press the old cartridge down and pull it out",
     "only cartridges of the 300 series fit", "the carriage stops moving"),
    ("calibrate the thermostat", "How do I calibrate the thermostat?",
     "press Menu and choose Sensor offset",
     "set the offset to the difference from a room thermometer",
     "the calibration resets after a power cut", "the display blinks twice"),
    ("share a folder", "How do I share a folder with a colleague?",
     "right-click the folder and choose Share", "enter your colleague's email and press Send",
     "guests can view but not edit", "the invitation is sent"),
    ("restore a deleted file", "How can I get back a file I deleted?",
     "open the Trash from the sidebar", "select the file and click Restore",
     "files stay in the Trash for 30 days", "the file reappears in its folder"),
    ("add a user to the account", "How do I add another user to my account?",
     "go to Settings > Team", "click Invite and enter their email address",
     "the Basic plan allows three users", "they accept the invitation"),
    ("charge the scooter", "How should I charge the scooter?",
     "plug the charger into the port under the deck", "leave it until the indicator turns green",
     "the battery must not be charged below 0 °C", "the indicator turns green"),
    ("descale the kettle", "How do I descale my kettle?",
     "fill it halfway with water and a cup of white vinegar", "boil it and leave it for an hour",
     "you should rinse it twice before making tea", "the scale has dissolved"),
]
HOW_TO = [
    "{Step1}, then {step2}.",
    "First, {step1}. Then {step2}. Note that {caution}.",
    "To {task}, {step1} and {step2}.",
    "{Step1} and wait until {wait}. After that, {step2}.",
    "Here's how: 1. {Step1}. 2. {Step2}.",
    "You can {task} yourself: {step1}, then {step2}. Keep in mind that {caution}.",
    "{Step1}. If that doesn't work, {step2}.",
    "Sure! {Step1}, wait until {wait}, then {step2}. {Caution}.",
]


# More actions, and short reports of their failure without a reason: "Sorry, I couldn't X." reads
# like "Sorry, I couldn't find that." to a model that has seen ten actions (request, do).
MORE_ACTIONS = [
    ("Change the delivery address to my office.", "change the delivery address"),
    ("Refund order 552.", "issue the refund for order 552"),
    ("Add Tom to our workspace.", "add Tom to the workspace"),
    ("Extend my trial by a week.", "extend your trial"),
    ("Export last month's report as a PDF.", "export the report"),
    ("Delete my old account.", "delete the old account"),
    ("Apply my student discount.", "apply the student discount"),
    ("Restart the staging server.", "restart the staging server"),
    ("Merge my two accounts.", "merge your accounts"),
    ("Print a return label.", "print the return label"),
    ("Activate my new SIM card.", "activate the SIM card"),
    ("Send the team a reminder about Friday.", "send the reminder"),
]
SHORT_ACTION_FAILED = [
    "Sorry, I couldn't {do}.",
    "I'm sorry, I wasn't able to {do}.",
    "Unfortunately, I couldn't {do}.",
    "Sorry, I failed to {do}.",
    "I couldn't {do}, sorry.",
    "Apologies, I was unable to {do}.",
]


# Twelve more topics, none of the ones above, for two more kinds drawn together (build_data.py
# splits them by their own seed): refusals in words the answers also use ("isn't covered",
# "I checked"), against answers in those words, so that a refusal is told by what it says about
# the sources, not by its vocabulary. Subject, question, yes, no, missing, as in TOPICS.
MORE_TOPICS = [
    ("the baggage allowance on economy fares", "How much luggage can I check in on an economy fare?",
     "economy fares include one checked bag of up to 23 kg",
     "economy Light fares do not include a checked bag", "sports equipment"),
    ("sick pay during the probation period", "Do I get sick pay while on probation?",
     "staff on probation receive sick pay from the first day",
     "sick pay is not paid for the first three days of absence", "certificates from abroad"),
    ("the deposit for a rented flat", "How much deposit can a landlord ask for?",
     "the deposit is capped at three months' rent",
     "the deposit cannot be used to pay the last month's rent", "interest on the deposit"),
    ("roaming charges in the EU", "Will I pay roaming charges in Spain?",
     "calls and data in the EU are billed as at home",
     "roaming in Switzerland is not included in the plan", "fair-use limits"),
    ("the password reset link", "How long is the password reset link valid?",
     "the reset link is valid for 60 minutes", "an expired link cannot be reused",
     "resets by SMS"),
    ("the museum's free entry days", "When is entry to the museum free?",
     "entry is free on the first Sunday of every month",
     "temporary exhibitions are not free on those days", "group bookings"),
    ("the battery life of the X2 headphones", "How long does the X2 battery last?",
     "the X2 headphones play for 30 hours on one charge",
     "the battery is not user-replaceable", "fast-charging times"),
    ("paying for furniture in instalments", "Can I pay for a sofa in instalments?",
     "orders over 300 euros can be paid in 3 interest-free instalments",
     "instalments are not offered on clearance items", "early settlement"),
    ("visitor badges at the plant", "Do visitors need a badge at the plant?",
     "visitors collect a badge at gate 2 with photo ID",
     "visitors may not enter the production hall without an escort", "contractor badges"),
    ("the free trial of the Pro plan", "Is there a free trial of the Pro plan?",
     "the Pro plan comes with a 14-day free trial", "the trial cannot be extended",
     "trials for teams"),
    ("the pharmacy's Sunday hours", "Is the pharmacy open on Sundays?",
     "the pharmacy opens from 10 am to 4 pm on Sundays",
     "the pharmacy does not fill prescriptions on Sundays", "the night service"),
    ("resitting a failed exam", "Can I resit a failed exam?",
     "a failed exam can be resat once in the August session",
     "resits are not allowed for exams already passed", "resit fees"),
]

# Refusals: {subject}, {source}.
MORE_REFUSALS = [
    "I don't see anything about {subject} in the documents I have.",
    "There's no mention of {subject} in {source}.",
    "{Source} doesn't say, so I can't tell you about {subject}.",
    "I couldn't confirm anything about {subject} from {source}.",
    "I have nothing to go on for {subject}.",
    "That doesn't appear in {source}, I'm afraid.",
    "I wasn't given any information about {subject}.",
    "I'm not certain, and {source} doesn't cover {subject}.",
    "Hmm, I can't find {subject} anywhere in {source}.",
    "The documents don't say anything on {subject}, so I'd rather not guess.",
    "I'd only be guessing about {subject}; {source} doesn't cover it.",
    "No details on {subject} were included in what I was given.",
    "Unfortunately, {subject} isn't something I have information on.",
    "I'm sorry, {source} doesn't go into {subject}.",
    "That's not covered in the material I can see.",
    "I can't answer that from {source}.",
    "Sorry, no information on {subject} came back from my search.",
    "I checked {source}, but found nothing relevant to {subject}.",
    "Information on {subject} isn't available to me.",
    "I'm unable to find anything that answers this.",
    "{Source} doesn't cover this question, sorry.",
    "I don't have the details needed to answer about {subject}.",
    "There are no results for {subject} in {source}.",
    "Sorry, I can't help with that: {source} has no information on {subject}.",
]

# Answers in the refusals' words: {yes}, {no}, {source}.
MORE_ANSWERS = [
    "I checked {source}: {no}.",
    "I looked it up, and {no}.",
    "{Source} is explicit that {no}.",
    "That isn't included. {No}.",
    "No, that's not covered: {no}.",
    "From what I found in {source}, {no}.",
    "I couldn't find any exception to this: {no}.",
    "There's no way around it, I'm afraid: {no}.",
    "I searched {source}, and {yes}.",
    "After checking {source}: {yes}.",
    "Sorry, I can't offer more than this: {yes}.",
    "I'm not able to change that, but {yes}.",
    "Nothing in {source} contradicts this: {yes}.",
    "I don't think so. {No}.",
    "Unfortunately that isn't possible, since {no}.",
    "The documents don't list any exceptions: {no}.",
]


# Twelve more topics and two more kinds drawn together (their own split seed in build_data.py):
# refusals in the words RAG assistants are prompted into ("The provided context does not
# specify ..."), and answers that open the same way but state what the documents say. Subject,
# question, yes, no, missing, as in TOPICS.
VARIED_TOPICS = [
    ("the parking fee at the airport", "How much does parking at the airport cost?",
     "short-stay parking costs 4 euros an hour", "the long-stay car park does not take cash",
     "charging electric cars"),
    ("late returns of library books", "What happens if I return a library book late?",
     "late books cost 20 cents a day", "reference books cannot be borrowed at all",
     "lost books"),
    ("guest passes at the gym", "Can I bring a friend to the gym?",
     "members can bring one guest a month for free", "guests under 16 are not admitted",
     "lockers for guests"),
    ("the operating systems the app supports", "Does the desktop app run on Linux?",
     "the desktop app runs on Windows 10 and macOS 12 or later",
     "there is no Linux version of the desktop app", "ARM processors"),
    ("the hotel's check-out time", "What time is check-out?", "check-out is at 11 am",
     "late check-out is not available at weekends", "luggage storage"),
    ("the mortgage's fixed-rate period", "How long is the rate fixed on my mortgage?",
     "the rate is fixed for the first 10 years", "the fixed rate cannot be renegotiated early",
     "the rate after the fixed period"),
    ("the paper sizes the printer takes", "What paper sizes does the printer take?",
     "the printer takes A4, A5 and letter paper", "the printer does not print on A3",
     "photo paper"),
    ("missing seminars", "How many seminars can I miss?",
     "students may miss up to 3 seminars a term", "missed lab sessions cannot be made up",
     "medical absences"),
    ("bikes on the train", "Can I take my bike on the train?",
     "bikes travel free outside peak hours", "bikes are not allowed on trains from 7 to 9 am",
     "folding bikes"),
    ("cancelling a doctor's appointment", "How do I cancel my appointment at the clinic?",
     "appointments can be cancelled online up to 24 hours before",
     "fees for missed appointments are not refunded", "cancelling by phone"),
    ("the phone's water resistance", "Is the phone waterproof?",
     "the phone is rated IP68, up to 1.5 metres for 30 minutes",
     "water damage is not covered by the warranty", "salt water"),
    ("the vacation allowance", "How many vacation days do I get?",
     "full-time staff get 25 vacation days a year", "unused days do not carry over past March",
     "vacation during the notice period"),
]

# Refusals: {subject}, {source}.
VARIED_REFUSALS = [
    "The provided context does not specify {subject}.",
    "I'm sorry, but {source} doesn't contain any information about {subject}.",
    "Based on {source}, there is no information regarding {subject}.",
    "{Source} doesn't indicate anything about {subject}.",
    "The answer to that isn't in {source}.",
    "{Subject} isn't documented in {source}.",
    "What I have covers other topics; {subject} isn't one of them.",
    "I couldn't locate {subject} in any of the documents.",
    "{Source} stops short of explaining {subject}.",
    "None of the results I got back mention {subject}, so I can't say.",
    "That detail isn't stated anywhere in {source}.",
    "I have no record of {subject} in {source}.",
    "{Subject} falls outside what {source} covers.",
    "My search didn't turn up anything on {subject}.",
    "There's a gap here: {source} has nothing on {subject}.",
    "I'm not finding {subject} in what was retrieved.",
    "I don't have access to information about {subject}.",
    "{Source} leaves {subject} out entirely.",
    "No section of {source} deals with {subject}.",
    "I can't see {subject} addressed in {source}, so I don't have an answer.",
    "Sadly, {subject} isn't something the documents explain.",
    "The text I was given doesn't get into {subject}.",
]

# Answers in those words: {yes}, {no}, {missing}, {source}.
VARIED_ANSWERS = [
    "The provided context specifies that {yes}.",
    "I'm sorry, but {no}.",
    "Based on {source}, {yes}.",
    "{Source} indicates that {no}.",
    "The answer is in {source}: {yes}.",
    "It's documented in {source}: {no}.",
    "What I have covers this: {yes}.",
    "I couldn't locate any exception: {no}.",
    "{Source} leaves no room for doubt: {no}.",
    "{Yes}, but {no}.",
    "My search turned up the rule: {yes}.",
    "There's no record of an exception; {no}.",
    "Sadly, {no}.",
    "I can't change this for you, but here is the rule: {yes}.",
    "That falls under the standard terms: {yes}.",
    "No section of {source} allows otherwise: {no}.",
    "The text I was given is clear: {no}.",
    "I'm afraid not: {no}.",
    "{Yes}; {source} doesn't mention {missing}.",
    "I didn't find anything that contradicts it: {yes}.",
    "Short answer: no. {No}.",
    "Unfortunately, {no}, and I can't make an exception.",
]


# Fourteen more topics for a fifth pair of kinds, composed (below; seeds of their own again);
# the second repeats one of TOPICS by mistake, kept as pass 20 was trained on it (it moves no
# row of the earlier kinds). Subject, question, yes, no, missing, as in TOPICS.
COMPOSED_TOPICS = [
    ("the daily withdrawal limit", "How much cash can I withdraw in a day?",
     "the daily cash withdrawal limit is 1,000 euros",
     "withdrawals abroad do not count toward a higher limit", "withdrawals in other currencies"),
    ("overtime pay for part-time staff", "Do part-time employees get overtime pay?",
     "part-time staff are paid overtime after 40 hours a week",
     "overtime is not paid for unapproved hours", "overtime on public holidays"),
    ("the noise rules in the building", "When are quiet hours in the building?",
     "quiet hours run from 10 pm to 7 am", "drilling is not allowed on Sundays",
     "parties on the roof terrace"),
    ("renewing a passport online", "Can I renew my passport online?",
     "adults can renew a passport online if the old one expired less than 5 years ago",
     "first passports cannot be applied for online", "urgent renewals"),
    ("the screen size of the Tab 9", "How big is the screen on the Tab 9?",
     "the Tab 9 has an 11-inch screen", "the Tab 9 does not support a stylus",
     "the screen's refresh rate"),
    ("transferring a season ticket", "Can someone else use my season ticket?",
     "a season ticket can be lent to a friend up to 5 times a season",
     "season tickets cannot be resold", "transfers for cup matches"),
    ("the course's final exam weighting", "How much is the final exam worth?",
     "the final exam counts for 60 percent of the grade",
     "the final exam cannot be replaced by coursework", "the oral part"),
    ("storing luggage at the station", "Can I leave my luggage at the station?",
     "lockers at the station cost 6 euros for 24 hours",
     "bags over 30 kg are not accepted in lockers", "overnight storage"),
    ("the car rental's mileage limit", "Is mileage unlimited on the rental car?",
     "rentals include 300 km a day", "unlimited mileage is not offered on vans",
     "one-way rentals"),
    ("adding a user to the team plan", "How do I add a colleague to our team plan?",
     "admins can invite users from the Members page",
     "the team plan does not allow more than 25 users", "guest accounts"),
    ("the recycling collection day", "When is the recycling collected?",
     "recycling is collected every other Tuesday",
     "glass is not collected at the kerb", "garden waste"),
    ("the kids' menu at the restaurant", "Do you have a children's menu?",
     "the children's menu costs 9 euros for children under 12",
     "the children's menu is not served after 8 pm", "high chairs"),
    ("the grace period on a loan payment", "Is there a grace period if I miss a loan payment?",
     "there is a grace period of 10 days before a fee applies",
     "the grace period does not apply to the first payment", "payment holidays"),
    ("upgrading to a larger storage plan", "Can I upgrade my storage mid-month?",
     "upgrades take effect at once and are billed pro rata",
     "storage cannot be downgraded below what you use", "family sharing"),
]

# An opener, a core and a closer, drawn for each row: the core is the template (what the split
# goes by); openers and closers are shared by refusals and answers, so that only the core tells.
COMPOSED_OPENERS = ["", "Sorry, ", "Unfortunately, ", "Thanks for asking. ", "Good question. ",
                    "Hmm, ", "I checked, and ", "I'm afraid ", "Okay, so ", "Let me see. ",
                    "I went through {source}, and ", "Apologies for the wait. "]
COMPOSED_CLOSERS = ["", " Is there anything else I can help with?", " I hope that helps.",
                    " You can also contact our support team.", " Let me know if you have "
                    "other questions.", " Please check with an agent for anything else."]

# Refusal cores: {subject}, {source}.
COMPOSED_REFUSALS = [
    "{source} gave me nothing to work with on {subject}",
    "{subject} is not a topic I can find in {source}",
    "pulling up {subject} in {source} gave me nothing",
    "this one is beyond what {source} can tell me",
    "my sources are silent on {subject}",
    "I can't offer an answer about {subject}",
    "{subject} drew a blank in {source}",
    "the material available to me never touches on {subject}",
    "I can't speak to {subject} with the information I have",
    "nowhere in {source} is {subject} explained",
    "I'd need more information than {source} provides to answer that",
    "the question about {subject} goes unanswered in {source}",
    "whatever the answer on {subject} is, it isn't in {source}",
    "I lack the information to answer about {subject}",
    "my lookup returned nothing for {subject}",
    "I can't find a single reference to {subject}",
    "{subject} is missing from {source}",
    "I'm not in a position to answer that, as {source} doesn't address it",
    "the documents available to me don't reach {subject}",
    "I found no details at all about {subject}",
]

# Answer cores in the same words: {yes}, {no}, {missing}, {source}.
COMPOSED_ANSWERS = [
    "{source} gave me a clear answer: {yes}",
    "this one is covered: {no}",
    "pulling it up in {source} gave me this: {yes}",
    "my sources agree that {no}",
    "I can offer an answer: {yes}",
    "{source} drew a clear line: {no}",
    "the material available to me is clear that {yes}",
    "I can speak to this: {yes}, though nothing is said about {missing}",
    "nowhere in {source} is an exception made: {no}",
    "as {source} explains, {yes}",
    "the question is answered in {source}: {no}",
    "{yes}, but I found nothing about {missing}",
    "my lookup returned this: {yes}",
    "I found a single reference, and it says {no}",
    "the rule is simple: {yes}",
    "I'm not in a position to change it, but {no}",
    "the documents available to me say that {yes}",
    "I found the details: {no}",
    "the answer is no, because {no}",
    "good news: {yes}",
]

# Twelve more requests for an action, and reports that it failed composed the same way (kind
# `actions_composed`, answers: the tool failed, the assistant answered): request, do, reason.
COMPOSED_ACTIONS = [
    ("Move my appointment to Thursday.", "move your appointment", "the booking system is offline"),
    ("Cancel my gym membership.", "cancel the membership", "the members database is locked"),
    ("Add a second driver to my rental.", "add the second driver",
     "the rental system rejected the licence number"),
    ("Switch my plan to yearly billing.", "switch you to yearly billing",
     "the billing service returned an error"),
    ("Order a replacement charger.", "order the charger", "the warehouse system is not responding"),
    ("Reserve a table for four at 8.", "reserve the table", "the restaurant's booking page timed out"),
    ("Update my shipping address.", "update the address", "the address could not be verified"),
    ("Forward this invoice to accounting.", "forward the invoice", "the mail gateway refused it"),
    ("Increase my card limit.", "raise the card limit", "the bank's approval service is down"),
    ("Join me to the Tuesday webinar.", "register you for the webinar",
     "the event platform returned an error"),
    ("Return the blue jacket I bought.", "start the return", "the order could not be found"),
    ("Turn on auto-renewal.", "turn on auto-renewal", "the subscription service did not respond"),
]

# Cores of a failed action: {do}, {reason}.
COMPOSED_ACTION_FAILURES = [
    "I got an error when I tried to {do}",
    "my attempt to {do} ended with an error",
    "the system wouldn't let me {do}",
    "I ran into a problem trying to {do}",
    "I tried twice but could not {do}",
    "{reason}, which kept me from being able to {do}",
    "doing that failed on my side: {reason}",
    "my request to {do} was turned down",
    "I had no luck trying to {do}: {reason}",
    "I could not {do} on my end",
    "it wasn't possible to {do} at the moment",
    "I was blocked from doing it: {reason}",
]


# Fourteen more topics, none of the ones above, for a sixth pair of kinds drawn by its own stream
# (and split by its own seed in build_data.py): fresh wordings, written for this project, of the
# ways RAG assistants and chatbots decline (hedged, restating the question, markdown, "we",
# offering other help) against answers in those words. Subject, question, yes, no, missing, as in
# TOPICS.
FRESH_TOPICS = [
    ("filing a home insurance claim", "How long do I have to file a home insurance claim?",
     "home insurance claims must be filed within 60 days of the damage",
     "claims for wear and tear are not accepted", "claims for garden sheds"),
    ("installing the software licence on a second computer",
     "Can I install my licence on a second computer?",
     "a single licence can be activated on two computers at once",
     "the licence cannot be shared with another person", "virtual machines"),
    ("summer stays in university housing", "Can I keep my student room over the summer?",
     "students can extend their room contract for July and August at the same weekly rent",
     "first-year halls do not offer summer stays", "storing belongings between contracts"),
    ("the monthly transit pass for seniors", "Is there a cheaper monthly bus pass for seniors?",
     "riders over 65 pay 25 euros for a monthly pass",
     "the senior pass is not valid on the airport express bus", "night buses"),
    ("emergency visits at the veterinary clinic", "Does the vet see emergencies at night?",
     "the clinic takes emergencies until midnight for a surcharge of 80 euros",
     "the clinic does not treat exotic pets after hours", "house calls"),
    ("paying the water bill in instalments", "Can I pay my water bill in instalments?",
     "water bills over 200 euros can be spread over 6 monthly payments",
     "instalment plans are not available for accounts in arrears", "direct debit dates"),
    ("the early-bird conference registration", "Is there an early-bird price for the conference?",
     "early-bird registration costs 290 euros until 31 March",
     "early-bird tickets are not refundable", "workshop tickets for students"),
    ("dental cover in the employee benefits", "Does the company health plan include dental care?",
     "the benefits plan pays 80 percent of routine dental care",
     "orthodontic treatment is not covered for adults", "cover for dependants abroad"),
    ("the science museum's annual pass", "Does the science museum sell an annual pass?",
     "an annual pass costs 45 euros and covers unlimited visits",
     "the annual pass does not include planetarium shows", "discounts for accompanying guests"),
    ("version history in the cloud backup", "How far back can I restore from the cloud backup?",
     "the cloud backup keeps daily versions of each file for 90 days",
     "files deleted more than 90 days ago cannot be restored", "backups of external drives"),
    ("the tax return deadline for freelancers", "When is the tax return due for freelancers?",
     "freelancers must file their tax return by 30 June",
     "late filing is not excused without a written request", "quarterly prepayments"),
    ("the first service on a new car", "When does my new car need its first service?",
     "the first service is due at 15,000 km or after one year, whichever comes first",
     "the first service is not free on used cars", "tyre checks"),
    ("borrowing e-books from the library", "How many e-books can I borrow at once?",
     "members can borrow up to 10 e-books at a time for 21 days",
     "e-books cannot be renewed while another member is waiting for them", "audiobooks"),
    ("the roaming add-on for the United States", "Does my phone plan work in the United States?",
     "the Travel add-on gives 5 GB of data in the US for 10 euros a week",
     "calls to US numbers are not included in the add-on", "roaming on flights"),
]

# Refusals: {subject}, {source}.
FRESH_REFUSALS = [
    "You asked about {subject}. I wasn't able to find that in {source}, so I can't give you an answer.",
    "I'm not confident enough to answer anything on {subject}; I found nothing solid to rely on in "
    "{source}.",
    "Details on {subject} might be published elsewhere, but they aren't in {source}, so I can't answer.",
    "I don't have visibility into {subject}.",
    "That's outside the scope of the documentation I can access.",
    "I have no way to verify {subject}, so I'd rather not give you an answer that might be wrong.",
    "There is only a passing mention of this area in {source}, not enough detail to answer about "
    "{subject}.",
    "**Not found.** I have no material on {subject} to draw from.",
    "My search for {subject} returned zero matching passages in {source}.",
    "We don't have anything published on {subject} at the moment.",
    "Could you rephrase your question? Nothing I searched matched {subject}.",
    "I'd be glad to help with something else, but I have nothing to share on {subject}.",
    "No information available on {subject}.",
    "Thanks for your patience. I went through {source} carefully and {subject} simply isn't "
    "addressed; if you can share a document that covers it, I'll gladly take another look.",
    "I want to give you an accurate answer, and right now I can't. I found no guidance on {subject} "
    "in {source}.",
    "Your question was about {subject}, and that topic doesn't come up in anything I can search.",
    "I'm hesitant to say anything on {subject} without a source to back it up, and I don't have one.",
    "Questions on {subject} are beyond the knowledge I was set up with.",
    "Our team hasn't documented {subject} yet.",
    "The search index I use has no entry for {subject}.",
    "That question doesn't match any of the articles I can pull up.",
    "No entries for {subject}.",
    "Let me be upfront: {subject} is a blind spot for me.",
    "Happy to look into something else for you, but {subject} is a question I can't answer from here.",
    "To answer that I'd need a document on {subject}, and none was provided to me.",
    "That's a fair question, though not one I can answer with what {source} gave me.",
    "**No answer.** None of the topics I have documentation for include {subject}.",
    "I've looked high and low in {source} and found no trace of {subject}.",
]

# Answers in those words: {yes}, {no}, {missing}, {source}.
FRESH_ANSWERS = [
    "You asked about this, so here's what applies: {yes}.",
    "**Found it.** {Yes}.",
    "{Yes}. On {missing}, though, I came up empty.",
    "I'm fairly sure {yes}, per {source}.",
    "We don't offer that, I'm afraid. {No}.",
    "I couldn't verify this independently, but going by {source}, {yes}.",
    "**Not available.** {No}.",
    "**Short version:** {yes}. I couldn't look up the separate matter of {missing}.",
    "I'm not confident about {missing}, but {yes}.",
    "Our records are clear on this one: {no}.",
    "I can't find anything that would let me say yes: {no}.",
    "There's only one line on it in {source}, and it says {yes}.",
    "I can't promise anything beyond the policy, which says {yes}.",
    "There isn't much detail, but the key point is that {yes}.",
    "That's outside what's allowed: {no}.",
    "My search for this returned one matching passage: {no}.",
    "I'm hesitant to add more, but {source} did say {yes}.",
    "It may be worth double-checking with staff, but {yes}.",
    "Happy to help with that. {Yes}.",
    "Thanks for your patience. {Yes}. Also worth knowing: {no}.",
    "Let me be upfront about it: {no}.",
    "Only part of your question has an answer: {yes}. The rest, about {missing}, I couldn't find.",
    "I'd hate to mislead you, so here is the exact wording from {source}: {no}.",
    "Not the answer you hoped for, I suspect: {no}.",
    "To be sure, I read it twice: {yes}.",
    "No need to rephrase, I found it: {yes}.",
    "Yes and no. {Yes}, while {no}.",
    "No word on {missing} anywhere, but {yes}.",
]


# Fourteen more topics, none of the ones above, for a pair of kinds in an enterprise assistant's
# register (its own stream, and its own split seed in build_data.py): an internal helpdesk, HR,
# finance, security and engineering assistant declining as such assistants do (formal, ticket-like,
# "0 relevant pages", compliance caution, "owned by another team") against answers in that tone.
# Subject, question, yes, no, missing, as in TOPICS.
WORKPLACE_TOPICS = [
    ("the VPN client for contractors", "Can contractors install the company VPN client?",
     "contractors get VPN access once their manager approves the request in the IT portal",
     "contractors cannot use the VPN on personal devices", "split tunnelling"),
    ("the hotel cap on business trips", "How much can I spend on a hotel night on a work trip?",
     "hotel stays are reimbursed up to 180 euros a night in capital cities",
     "minibar charges are not reimbursed", "stays paid with personal loyalty points"),
    ("parental leave for adoptive parents", "Do adoptive parents get parental leave?",
     "adoptive parents get 16 weeks of paid leave from the placement date",
     "the leave cannot be split into more than three blocks", "foster placements"),
    ("reporting a phishing email", "What should I do with a suspicious email?",
     "suspicious emails are reported with the Report Phishing button in the mail client",
     "phishing emails must not be forwarded to colleagues", "phishing by text message"),
    ("laptops for new hires", "When does a new hire get their laptop?",
     "new hires collect a preconfigured laptop at the IT desk on their first morning",
     "laptops are not shipped to home addresses before the start date", "second monitors"),
    ("purchase approvals above 10,000 euros", "Who has to approve a purchase over 10,000 euros?",
     "purchases above 10,000 euros need sign-off from the department head and procurement",
     "a purchase cannot be split into smaller orders to avoid approval", "framework contracts"),
    ("gifts from suppliers", "Can I accept a gift from a supplier?",
     "gifts worth up to 50 euros may be accepted and must be logged in the gifts register",
     "cash gifts are never allowed", "hospitality at trade fairs"),
    ("desk booking on the third floor", "How do I book a desk on the third floor?",
     "third-floor desks are booked in the Workspace app up to two weeks ahead",
     "a desk cannot be held for more than three days in a row", "standing desks"),
    ("rolling back a failed deployment", "How do I roll back a failed deployment?",
     "a failed release is rolled back by running the rollback pipeline with the previous tag",
     "database migrations are not reverted automatically", "rollbacks during a change freeze"),
    ("commission on contract renewals", "Do sales reps earn commission on renewals?",
     "reps earn 4 percent commission on renewed annual contracts",
     "no commission is paid on renewals below 5,000 euros", "multi-year prepayments"),
    ("the home office equipment budget", "Is there a budget for home office equipment?",
     "employees can claim up to 400 euros every two years for home office equipment",
     "the budget does not cover internet bills", "chairs ordered from abroad"),
    ("read access to the production database",
     "How do I get read access to the production database?",
     "read access is granted through an access request approved by the data owner",
     "write access is not given to personal accounts", "access for interns"),
    ("the mileage rate for private cars", "What is the mileage rate if I use my own car for work?",
     "private cars are reimbursed at 30 cents per kilometre",
     "the commute between home and the office is not reimbursed", "charging an electric car"),
    ("keeping signed customer contracts", "How long must we keep signed customer contracts?",
     "signed contracts are kept for 10 years after they end",
     "contracts may not be stored on personal drives", "contracts signed electronically"),
]

# Refusals: {subject}, {source}.
WORKPLACE_REFUSALS = [
    "The policy repository does not contain guidance on {subject}.",
    "No matching article found for {subject}. Consider raising a ticket with the service desk.",
    "Searched Confluence for {subject}: 0 relevant pages.",
    "I can't provide guidance on {subject} without a documented source, and I found none in "
    "{source}.",
    "Questions on {subject} are owned by another department, and nothing on the topic is "
    "documented here.",
    "I may only answer from approved documentation, and no approved document covers {subject}.",
    "Knowledge article lookup: {subject}. Status: no published article. Next step: contact the "
    "process owner.",
    "{Subject}: policy status unknown, no record located in {source}.",
    "I'm unable to advise on {subject}; please refer the question to the relevant policy owner.",
    "Result of intranet search for {subject}: no policy, procedure or FAQ entry.",
    "Escalation recommended: current internal documentation does not address {subject}.",
    "I have to defer on {subject}. The matter sits with another team, and their guidance isn't "
    "published where I can read it.",
    "For compliance reasons I won't speculate on {subject}; the approved sources I can cite are "
    "silent on the point.",
    "Suggested ticket: category Other, summary {subject}. I couldn't resolve this from {source}.",
    "Nothing in {source} constitutes official guidance on {subject}. Please check with your line "
    "manager before acting.",
    "{Source}: 0 results for {subject}.",
    "Internal guidance on {subject}, if it exists, has not been shared with this assistant.",
    "I'm only authorised to share what appears in {source}, and I see no entry for {subject} there.",
    "The closest matches for {subject} were unrelated pages; none of them answer your question.",
    "This request falls within the data owner's remit. I have no documentation on {subject} to "
    "share.",
    "Helpdesk note: {subject}. No known article, no known workaround. Routing to second-line "
    "support is suggested.",
    "Policy reference for {subject}: none on file. I am therefore unable to confirm anything.",
    "I've logged your question on {subject} for review, since no source I can access answers it.",
    "Please note: the documented scope of this assistant does not include {subject}.",
    "I found the team space where {subject} would be documented, but the page is empty.",
    "After reviewing {source}, I can confirm only that the matter of {subject} is undocumented.",
    "{Source} returned no entry under {subject}; the owning team would need to publish one first.",
    "Per the assistant's usage guidelines, I can't issue an answer on {subject} that no internal "
    "document supports.",
]

# Answers in that tone: {yes}, {no}, {missing}, {source}.
WORKPLACE_ANSWERS = [
    "Per the policy repository, {yes}.",
    "Matching article found: {yes}.",
    "The policy repository is clear: {no}.",
    "Searched Confluence: 1 relevant page. It states that {yes}.",
    "Knowledge article lookup complete. Status: published. Summary: {yes}.",
    "Per the approved documentation, {yes}. No ticket is needed for this.",
    "Compliance note: {no}. Please keep this in mind before proceeding.",
    "The owning team has documented this: {yes}. They have not published anything on {missing}.",
    "Guidance on record: {yes}. Exceptions for {missing} are not documented; raise a ticket for "
    "that part.",
    "I can provide guidance here, as it is documented in {source}: {no}.",
    "Helpdesk note: known article exists. {Yes}.",
    "As set out in the internal policy, {no}.",
    "Policy reference on file. {Yes}, and {no}.",
    "Result of intranet search: one policy entry, which says that {yes}.",
    "I'm authorised to share this, since it appears in {source}: {yes}.",
    "For compliance reasons, I'll quote the rule rather than paraphrase it: {no}.",
    "No escalation needed, since this is covered in {source}. {Yes}.",
    "The owning team's published guidance says that {yes}.",
    "Procedure confirmed: {yes}.",
    "Per section 4.2 of the handbook, {no}.",
    "Ticket not required. {No}.",
    "Please note: {no}. This is a firm rule with no documented exceptions.",
    "The documented position is that {yes}; for {missing}, contact the owning team.",
    "Confirmed against the current version of the policy: {yes}.",
    "Internal guidance does exist on this point: {no}.",
    "From the standard operating procedure: {yes}.",
    "I checked the approved sources for you. Outcome: {no}.",
    "Relevant clause, quoted verbatim: \"{Yes}.\"",
]


# Fourteen more topics, none of the ones above, for a pair of kinds in a consumer chatbot's
# register (its own stream, and its own split seed in build_data.py): casual, friendly refusals,
# often several sentences with a preamble and an offer of other help ("Great question! I dug
# around but ..."), against answers as chatty that state the fact. Subject, question, yes, no,
# missing, as in TOPICS.
CHATTY_TOPICS = [
    ("the pizza delivery radius", "Will you deliver pizza to my street in Oakfield?",
     "the pizzeria delivers within 5 km of the shop", "there are no deliveries after 11 pm",
     "delivery to campus dorms"),
    ("changing the name on a concert ticket", "Can I put my concert ticket in a friend's name?",
     "the name on a ticket can be changed for free up to 48 hours before the show",
     "a ticket cannot be transferred once it has been scanned", "VIP packages"),
    ("the screen limit on the Standard streaming plan",
     "How many screens can watch at once on the Standard plan?",
     "the Standard plan streams on two screens at the same time",
     "downloads are not available on the Basic plan", "streaming on a games console"),
    ("returning worn sneakers", "Can I return sneakers I've already worn outside?",
     "sneakers worn outside can be returned within 14 days if they are undamaged",
     "customised sneakers cannot be returned", "exchanges for another colour"),
    ("skipping a week of the meal kit", "Can I skip a week of my meal kit?",
     "any week can be skipped until midnight on the Wednesday before delivery",
     "a skipped week is not refunded once the box is packed", "pausing for a whole month"),
    ("booking a dog groomer online", "Can I book a dog grooming appointment online?",
     "grooming appointments can be booked online up to four weeks ahead",
     "the groomer does not take dogs over 40 kg", "cat grooming"),
    ("the oat milk surcharge at the coffee shop", "Do you charge extra for oat milk?",
     "oat milk costs an extra 40 cents", "almond milk is not on the menu",
     "soy milk in iced drinks"),
    ("gift wrapping for online orders", "Can you gift wrap my order?",
     "gift wrapping is available at checkout for 3 euros",
     "gift wrap is not offered on oversized items", "handwritten gift notes"),
    ("swimming lessons for kids", "What age can my child start swimming lessons?",
     "swimming lessons start from age 4", "parents cannot stay on the pool deck during lessons",
     "private lessons"),
    ("helmets with a bike rental", "Does the bike rental include a helmet?",
     "every bike rental comes with a free helmet", "child seats are not available on e-bikes",
     "rentals longer than a week"),
    ("student prices at the cinema", "Are there student prices at the cinema?",
     "students pay 7 euros on weekdays with a valid card",
     "student prices do not apply to 3D screenings", "the recliner seats"),
    ("moving a game save from console to PC", "Can I carry my game save from console to PC?",
     "progress syncs between console and PC once you link your account",
     "saves from the old beta cannot be transferred", "the mobile version"),
    ("rescheduling a haircut", "Can I move my haircut to another day?",
     "haircuts can be rescheduled in the app up to 2 hours before",
     "no-shows are not refunded", "booking a particular stylist"),
    ("the plant shop's repotting service", "Will you repot my plant if I buy a new pot?",
     "repotting is free with any pot bought in the shop",
     "plants taller than 1.5 metres are not repotted in the shop", "soil for succulents"),
]

# Refusals: {subject}, {source}.
CHATTY_REFUSALS = [
    "Great question! I dug around but couldn't turn up anything on {subject}. Want me to help "
    "with something else?",
    "Hmm, that one's got me stumped. Nothing on {subject} in what I can see.",
    "Honestly? No idea. The info just isn't there.",
    "Oof, I wish I could help! I had a good look for {subject} and came back empty-handed.",
    "Ooh, tricky one. I've got nothing on {subject}, sorry! Anything else on your mind?",
    "Ah, I was hoping to find something for you, but I don't know anything about {subject}.",
    "You've got me there! I can't find a thing about {subject}.",
    "Okay, full honesty: I looked, and there's zip on {subject}. Sorry about that!",
    "Aw, shoot. I don't have the scoop on {subject}.",
    "So I went digging for {subject}... and nope, came up with nothing. Maybe try the store "
    "directly?",
    "That's a good one, and I'd love to answer it, but I've got no info on {subject}.",
    "I hate to leave you hanging, but I really can't tell you anything about {subject}.",
    "Gosh, I'm drawing a total blank on {subject}. Sorry! Is there something else I can do for "
    "you?",
    "Not gonna lie, I'm clueless about {subject}.",
    "Let me save you some time: I don't know, and nothing I can look at covers {subject}.",
    "Sorry friend, no luck with {subject} on my end!",
    "Hmm, I poked around {source} and nada. Nothing about {subject}.",
    "Yikes, sorry! I don't have anything on that. Want to ask me about something else?",
    "{Subject}? Wish I knew! There's nothing about that in {source}.",
    "I'm kind of stuck here, to be honest. I couldn't find the answer about {subject} anywhere, "
    "and I'd rather not make something up.",
    "Good thinking to ask! Sadly I can't help with this one, there's nothing on {subject} I can "
    "point you to.",
    "Eek, {source} and I are both clueless on {subject}.",
    "Well, that's a new one for me! I've got zero details on {subject}. Anything else I can dig "
    "into?",
    "Bad news, I'm afraid: I couldn't find a thing. Feel free to ask me something else though!",
    "Not sure, sorry! I checked everywhere I could and {subject} didn't come up.",
    "Wish I could give you a straight answer, but I'm totally in the dark about {subject}.",
    "Ha, you've found a gap in my knowledge! Nothing on {subject}, unfortunately.",
    "Thanks for bearing with me! Sadly, {source} turned up nothing useful about {subject}. I'd "
    "give the team a shout for that one.",
]

# Answers as chatty: {yes}, {no}, {missing}, {source}.
CHATTY_ANSWERS = [
    "Great question! Yep, {yes}. Anything else?",
    "Ah, bummer: {no}.",
    "Oh, this'll make your day: {yes}!",
    "Ooh, I know this one! {Yes}.",
    "So here's the deal: {yes}. Want me to help with anything else?",
    "Honestly? {No}. Sorry about that!",
    "Hmm, took a bit of digging, but {yes}.",
    "Oof, sorry to be the bearer of bad news, but {no}.",
    "You're in luck! {Yes}. Heads up though, {no}.",
    "Okay, full honesty: {no}. But hey, {yes}.",
    "Aw, shoot. {No}. Wish I had a better answer for you!",
    "Yep! {Yes}. I couldn't find anything on {missing}, but let me know if you want me to keep "
    "looking.",
    "Nope, no dice. {No}.",
    "Good thinking to ask! {Yes}.",
    "Let me save you some time: {no}.",
    "I poked around {source} and found it: {yes}.",
    "Yikes, not what you want to hear, but {no}.",
    "Sure thing! {Yes}. Is there something else on your mind?",
    "Not gonna lie, {no}. Bit of a pain, I know!",
    "Ha, easy one! {Yes}.",
    "Quick answer: {yes}. Not sure about {missing} though, sorry!",
    "Wish I had better news: {no}.",
    "So I went digging, and {yes}. Pretty handy, right?",
    "Thanks for bearing with me! Found it in {source}: {yes}.",
    "Sorry friend, {no}. Anything else I can dig into?",
    "Eek, I'm clueless about {missing}, but I do know that {yes}.",
    "Well, hey, that's an easy one: {no}.",
    "Hmm, let me think... yes! {Yes}. Happy to help with anything else.",
]


def cap(text: str) -> str:
    return text[:1].upper() + text[1:]


def fill(template: str, topic: tuple[str, ...], source: str) -> str:
    subject, _question, yes, no, missing = topic
    values = {"subject": subject, "yes": yes, "no": no, "missing": missing, "source": source}
    if topic in TOPICS:
        values["short"] = SHORT[TOPICS.index(topic)]
    values |= {k.capitalize(): cap(v) for k, v in values.items()}
    return cap(template.format(**values))


def rows() -> list[dict[str, str]]:
    rng = random.Random(16)
    out = []
    for label, groups in (("no_answer", REFUSALS), ("answer", ANSWERS)):
        for kind, templates in groups.items():
            for t, template in enumerate(templates):
                uses_topic = "{" in template
                # every template with a slot on 6 topics, fixed phrases once per topic question
                topics = rng.sample(range(len(TOPICS)), 6 if uses_topic else 2)
                for n in topics:
                    topic = TOPICS[n]
                    out.append({"question": topic[1], "answer": fill(template, topic,
                                                                     rng.choice(SOURCES)),
                                "label": label, "kind": kind, "template": f"{kind}-{t}",
                                "topic": topic[0]})
    for t, template in enumerate(ACTION_FAILED):
        for n in rng.sample(range(len(ACTIONS)), 6):
            topic, request, do, reason = ACTIONS[n]
            out.append({"question": request,
                        "answer": cap(template.format(do=do, reason=reason, Reason=cap(reason))),
                        "label": "answer", "kind": "action_failed",
                        "template": f"action_failed-{t}", "topic": topic})
    rng = random.Random(17)  # its own stream: the rows above stay as they were
    for t, reply in enumerate(SMALL_TALK):
        for greeting in rng.sample(GREETINGS, 2):
            out.append({"question": greeting, "answer": reply, "label": "answer",
                        "kind": "small_talk", "template": f"small_talk-{t}",
                        "topic": f"greeting: {greeting}"})
    for t, entity in enumerate(ENTITIES):
        for question in rng.sample(ENTITY_QUESTIONS, 2):
            out.append({"question": question, "answer": entity, "label": "answer",
                        "kind": "entity_answer", "template": f"entity_answer-{t}",
                        "topic": f"entity: {question}"})
    rng = random.Random(18)  # its own stream again
    for t, template in enumerate(HOW_TO):
        for n in rng.sample(range(len(HOW_TO_TOPICS)), 6):
            task, question, step1, step2, caution, wait = HOW_TO_TOPICS[n]
            values = {"task": task, "step1": step1, "step2": step2, "caution": caution,
                      "wait": wait}
            values |= {k.capitalize(): cap(v) for k, v in values.items()}
            out.append({"question": question, "answer": cap(template.format(**values)),
                        "label": "answer", "kind": "how_to", "template": f"how_to-{t}",
                        "topic": task})
    rng = random.Random(20)  # and again
    for t, template in enumerate(SHORT_ACTION_FAILED):
        for n in rng.sample(range(len(MORE_ACTIONS)), 6):
            request, do = MORE_ACTIONS[n]
            out.append({"question": request, "answer": template.format(do=do), "label": "answer",
                        "kind": "action_failed_short", "template": f"action_failed_short-{t}",
                        "topic": do})
    # Two more pairs of kinds on topics of their own, each pair drawn by its own stream
    out += paired_kinds(22, MORE_TOPICS, (("no_answer", "declines_more", MORE_REFUSALS),
                                          ("answer", "negative_more", MORE_ANSWERS)))
    out += paired_kinds(24, VARIED_TOPICS, (("no_answer", "declines_varied", VARIED_REFUSALS),
                                            ("answer", "answers_varied", VARIED_ANSWERS)))
    rng = random.Random(26)
    for label, kind, cores in (("no_answer", "declines_composed", COMPOSED_REFUSALS),
                               ("answer", "answers_composed", COMPOSED_ANSWERS)):
        for t, core in enumerate(cores):
            for n in rng.sample(range(len(COMPOSED_TOPICS)), 6):
                topic = COMPOSED_TOPICS[n]
                for _ in range(3):
                    out.append({"question": topic[1],
                                "answer": fill(composed(core, rng), topic, rng.choice(SOURCES)),
                                "label": label, "kind": kind, "template": f"{kind}-{t}",
                                "topic": topic[0]})
    rng = random.Random(28)
    for t, core in enumerate(COMPOSED_ACTION_FAILURES):
        for n in rng.sample(range(len(COMPOSED_ACTIONS)), 6):
            request, do, reason = COMPOSED_ACTIONS[n]
            for _ in range(3):
                out.append({"question": request, "answer": cap(composed(core, rng).format(
                                do=do, reason=reason, Reason=cap(reason),
                                source=rng.choice(SOURCES))),
                            "label": "answer", "kind": "actions_composed",
                            "template": f"actions_composed-{t}", "topic": do})
    # Fresh wordings, then two registers (an enterprise assistant's, a consumer chatbot's)
    out += paired_kinds(30, FRESH_TOPICS, (("no_answer", "declines_fresh", FRESH_REFUSALS),
                                           ("answer", "answers_fresh", FRESH_ANSWERS)))
    out += paired_kinds(32, WORKPLACE_TOPICS, (("no_answer", "declines_workplace", WORKPLACE_REFUSALS),
                                               ("answer", "answers_workplace", WORKPLACE_ANSWERS)))
    out += paired_kinds(34, CHATTY_TOPICS, (("no_answer", "declines_chatty", CHATTY_REFUSALS),
                                            ("answer", "answers_chatty", CHATTY_ANSWERS)))
    return out


def paired_kinds(seed: int, topics: Sequence[tuple[str, ...]],
                 kinds: tuple[tuple[str, str, list[str]], ...]) -> list[dict[str, str]]:
    """A pair of kinds (label, kind, templates) on topics of their own, drawn by its own stream:
    each template filled on 6 of the topics."""
    rng = random.Random(seed)
    out = []
    for label, kind, templates in kinds:
        for t, template in enumerate(templates):
            for n in rng.sample(range(len(topics)), 6):
                topic = topics[n]
                out.append({"question": topic[1], "answer": fill(template, topic, rng.choice(SOURCES)),
                            "label": label, "kind": kind, "template": f"{kind}-{t}", "topic": topic[0]})
    return out


def composed(core: str, rng: random.Random) -> str:
    """The core between an opener and a closer drawn from those shared by every composed kind."""
    opener, closer = rng.choice(COMPOSED_OPENERS), rng.choice(COMPOSED_CLOSERS)
    if not opener or opener.endswith(". "):  # the core opens the sentence: "{Source} ..."
        core = core.replace(core[:2], core[:2].title(), 1)
    return f"{opener}{core}.{closer}"


def main() -> None:
    data = rows()
    OUT.parent.mkdir(parents=True, exist_ok=True)
    OUT.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in data))
    by = {}
    for r in data:
        by[(r["label"], r["kind"])] = by.get((r["label"], r["kind"]), 0) + 1
    print(f"wrote {len(data)} rows to {OUT}: " + ", ".join(f"{k[1]} {v}" for k, v in by.items()))


if __name__ == "__main__":
    main()
