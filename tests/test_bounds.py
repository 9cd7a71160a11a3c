"""A claim's bound on a figure against the passage's own figure (monitor/judges/bounds.py). The
pairs are VitaminC's (its dev split, CC BY-SA 3.0), which the claim-support model read near its
threshold: the check speaks where it can tell, and is silent where the passage does not settle it."""

from __future__ import annotations

import pytest

from monitor.judges.bounds import contradicted_bound


@pytest.mark.unit
@pytest.mark.parametrize(("claim", "passage", "contradicts"), [
    ("The Death of Superman has a rating of more than 85 % on Rotten Tomatoes .",
     "`` It currently holds an 80 % on Rotten Tomatoes , based on 7 reviews.",
     "“more than 85 %” against “80 %”"),
    ("The company `` Foot Locker '' operates in less than 15 countries worldwide .",
     "Foot Locker Retail , Inc. is an American sportswear and footwear retailer , with its "
     "headquarters in Midtown Manhattan , New York City , and operating in 28 countries worldwide .",
     "“less than 15 countries” against “28 countries”"),
    ("The film Color of Night came out after 1995 .",
     "Color of Night is a 1994 American erotic mystery thriller film produced by Cinergi Pictures "
     "and released in the United States by Hollywood Pictures .",
     "“after 1995” against “1994”"),
    ("Justin Donovan Houston was born after 15 January 1989 .",
     "Justin Donovan Houston ( born January 12 , 1989 ) is an American football outside "
     "linebacker for the Kansas City Chiefs of the National Football League ( NFL ) .",
     "“after 15 January 1989” against “January 12 , 1989”"),
    # under its question, as the local judge checks a claim
    ("How many countries? It operates in under 15 countries.",
     "Foot Locker operates in 28 countries worldwide.", "“under 15 countries” against “28 countries”"),
])
def test_a_bound_the_passage_contradicts(claim: str, passage: str, contradicts: str) -> None:
    assert contradicted_bound(claim, passage) == contradicts


@pytest.mark.unit
@pytest.mark.parametrize(("claim", "passage"), [
    # the bound holds
    ("Rotten Tomatoes gave the film Okja an approval rating of more than 78 % .",
     "Okja currently holds a 79 % approval rating on review aggregator website Rotten Tomatoes , "
     "based on 38 reviews , with a weighted average of 7.6/10 ."),
    # the passage's figure is itself a bound: it cannot contradict the claim's
    ("The Harvard University Library System comprises nearly 80 libraries holding over 18 million "
     "volumes.", "comprises nearly 80 individual libraries holding over 18 million volumes."),
    # "20" ends a range of years, not a count of cases (VitaminC's dev split)
    ("Bosnia and Herzegovina had less than 20 coronavirus cases by March 13 , 2020 .",
     "The 2019–20 coronavirus pandemic was confirmed to have spread to Bosnia and Herzegovina when "
     "its first case was confirmed on 5 March 2020."),
    # a bound after the figure
    ("Orders above 50 dollars ship free.", "Shipping is free on orders of 50 dollars or more."),
    # two values of the unit: which one the claim is about, the passage does not say
    ("The store had more than 500 visitors on Monday.",
     "The store had 480 visitors on Monday and 530 visitors on Tuesday."),
    # "in" says nothing of what 700 counts
    ("As of 17 April , 2020 there were less than 700 in the Federation of Bosnia and Herzegovina .",
     "As of 17 April 2020 , in Bosnia and Herzegovina there were 1220 confirmed coronavirus cases , "
     "of which 500 were in Republika Srpska , 702 in the Federation of Bosnia and Herzegovina ."),
    # a year before which, against a passage of several years
    ("Florida State University was designated as a preeminent university before the 2000s .",
     "Florida State was founded in 1851 and designated as preeminent in 2013 ."),
    # the same year: "after 1994" of something in 1994 is not settled here
    ("The film Color of Night came out after 1994 .", "Color of Night is a 1994 American film ."),
    # no bound at all
    ("Heat was directed by Michael Mann.", "Heat is a 1995 film directed by Michael Mann."),
])
def test_silent_where_the_passage_does_not_settle_the_bound(claim: str, passage: str) -> None:
    assert contradicted_bound(claim, passage) is None
