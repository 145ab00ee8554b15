"""Write edge_cases.jsonl: hand-written responses for every IFEval instruction id.

Boundary counts, unicode, markdown variants, empty and whitespace-only responses, trailing
white space, fences and dividers: the places where two implementations of the same instruction
can part. None of these texts is in IFEval's data. Run with any Python:

    python benchmarks/ifeval_heldout/make_edge_cases.py
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
CASES: list[tuple[str, dict[str, Any], list[str]]] = []


def add(instruction_id: str, kwargs: dict[str, Any], *responses: str) -> None:
    CASES.append((instruction_id, kwargs, list(responses)))


# --- generic: empty, blank, trailing white space --------------------------------------------
BLANK: list[tuple[str, dict[str, Any]]] = [
    ("punctuation:no_comma", {}),
    ("startend:quotation", {}),
    ("detectable_format:title", {}),
    ("length_constraints:number_words", {"relation": "less than", "num_words": 5}),
    ("length_constraints:number_sentences", {"relation": "less than", "num_sentences": 3}),
    ("keywords:forbidden_words", {"forbidden_words": ["cat"]}),
    ("change_case:english_lowercase", {}),
    ("language:response_language", {"language": "en"}),
]
for iid, kw in BLANK:
    add(iid, kw, "", "   ", "\n\n", "\t \n ")

# --- length_constraints:number_words ---------------------------------------------------------
add(
    "length_constraints:number_words",
    {"relation": "less than", "num_words": 5},
    "one two three four",
    "one two three four five",
    "it's a well-known fact",
    "naïve café über straße",
    "日本語のテキスト",
    "e-mail foo_bar 3.14 x",
    "  one two three four  \n",
    "**one** *two* three",
)
add(
    "length_constraints:number_words",
    {"relation": "at least", "num_words": 5},
    "one two three four five",
    "one two three four",
    "don't won't can't",
    "١٢٣ 四 五 six seven",
)

# --- length_constraints:number_sentences -----------------------------------------------------
S3 = {"relation": "less than", "num_sentences": 3}
S2 = {"relation": "at least", "num_sentences": 2}
for kw in (S3, S2):
    add(
        "length_constraints:number_sentences",
        kw,
        "One sentence here.",
        "First. Second. Third.",
        "Dr. Smith arrived. He sat down.",
        "It costs $3.50 today. Buy it.",
        "Wait... what happened? Nobody knows!",
        "I live in the U.S. and I like it. Really.",
        "Title line\nSecond line without stop\nThird line.",
        "- item one\n- item two\n- item three",
        "1. First point.\n2. Second point.\n3. Third point.",
        '"Stop!" he said. Then he left.',
        "He said “go.” She went.",
        "Visit example.com. It is nice.",
        "This is e.g. an example. And another one.",
        "A sentence without a final stop",
        "Mr. and Mrs. Smith went home. They slept.",
        "It was 5 p.m. The sun set.",
        "## Heading\n\nA paragraph. Another sentence.",
        "Hello!!! How are you??? Fine.",
        "One.Two.Three.",
        "The end. ",
        "Prices rose 3.5%. Stocks fell.",
        "See section 2. It explains.",
        "He is J. R. R. Tolkien. He wrote books.",
        "Is it? Yes. No!",
        "This sentence ends with an emoji 🙂 Next sentence here.",
        "First sentence.\n\nSecond sentence.\n\nThird sentence.",
        "*First sentence.* **Second sentence.** Third sentence.",
        "(First sentence.) (Second sentence.)",
        "Items: a. b. c.",
        "I met Prof. Lee. She smiled.",
        "Version 2.0 is out. Update now.",
        "No. 5 is the answer. It wins.",
        "The U.S.A. is big. Canada too.",
        "etc. etc. etc.",
        "Ok. Ok.",
    )

# --- length_constraints:number_paragraphs ----------------------------------------------------
add(
    "length_constraints:number_paragraphs",
    {"num_paragraphs": 2},
    "First.\n***\nSecond.",
    "First.***Second.",
    "First.\n\n***\n\nSecond.",
    "***\nFirst.\n***\nSecond.\n***",
    "First.\n***\n***\nSecond.",
    "First.\n* * *\nSecond.",
    "First.\n****\nSecond.",
    "First.\n\nSecond.",
    "First.\n***\nSecond.\n***\nThird.",
    "First. \t***\t Second.",
    "First.\n*** \nSecond.\n",
    "**First.**\n***\n**Second.**",
)
add(
    "length_constraints:number_paragraphs",
    {"num_paragraphs": 1},
    "Only one paragraph.",
    "Only one.\n***",
    "***",
)

# --- length_constraints:nth_paragraph_first_word ---------------------------------------------
NTH = {"num_paragraphs": 3, "nth_paragraph": 2, "first_word": "however"}
add(
    "length_constraints:nth_paragraph_first_word",
    NTH,
    "Intro.\n\nHowever, this.\n\nEnd.",
    "Intro.\n\nHOWEVER this.\n\nEnd.",
    'Intro.\n\n"However," he said.\n\nEnd.',
    "Intro.\n\n'However' he said.\n\nEnd.",
    "Intro.\n\n\"'However,' he said.\"\n\nEnd.",
    "Intro.\n\n'\"However,\" he said.'\n\nEnd.",
    "Intro.\n\n**However**, this.\n\nEnd.",
    "Intro.\n\n  However, indented.\n\nEnd.",
    "Intro.\n\n\nHowever, three newlines.\n\nEnd.",
    "Intro.\n\nHowever: colon.\n\nEnd.",
    "Intro.\n\nHowever; semicolon.\n\nEnd.",
    "Intro.\n\nHowever—dash.\n\nEnd.",
    "Intro.\n\nHowever.\n\nEnd.\n\n",
    "Intro.\n\nHowever this.\n\nEnd.\n\nExtra.",
    "Intro.\n\n\n\nHowever this.\n\nEnd.",
    "Intro.\n \nHowever this.\n\nEnd.",
    "Intro.\r\n\r\nHowever this.\r\n\r\nEnd.",
    "Intro.\n\nHowevers this.\n\nEnd.",
    "Intro.\n\n(However) this.\n\nEnd.",
)
add(
    "length_constraints:nth_paragraph_first_word",
    {"num_paragraphs": 2, "nth_paragraph": 1, "first_word": "summary"},
    "Summary: it works.\n\nDetails follow.",
    "# Summary\n\nDetails follow.",
    "\n\nSummary here.\n\nDetails.",
    "Summary's point.\n\nDetails.",
)

# --- keywords:existence ----------------------------------------------------------------------
add(
    "keywords:existence",
    {"keywords": ["cat", "ice cream"]},
    "The CAT likes ICE CREAM.",
    "Concatenate the icecream.",
    "The cat likes ice\ncream.",
    "The cat likes ice  cream.",
    "The cat likes ice-cream.",
    "The cat.",
)
add(
    "keywords:existence",
    {"keywords": ["café"]},
    "A small CAFÉ.",
    "A small cafe.",
)

# --- keywords:forbidden_words ----------------------------------------------------------------
add(
    "keywords:forbidden_words",
    {"forbidden_words": ["cat", "new york"]},
    "Concatenation is fine.",
    "My cat.",
    "My CAT!",
    "The cats are here.",
    "cat's toy",
    "cat_food",
    "I love New York.",
    "I love New  York.",
    "I love new\nyork.",
    "**cat**",
    "scat",
)
add(
    "keywords:forbidden_words",
    {"forbidden_words": ["naïve"]},
    "A naïve plan.",
    "A naïveté.",
)

# --- keywords:frequency ----------------------------------------------------------------------
add(
    "keywords:frequency",
    {"keyword": "the", "frequency": 3, "relation": "at least"},
    "the the the",
    "The THE tHe",
    "theme other then",
    "the the",
)
add(
    "keywords:frequency",
    {"keyword": "dog", "frequency": 2, "relation": "less than"},
    "one dog",
    "dog dog",
    "dogma hotdog",
    "",
)
add(
    "keywords:frequency",
    {"keyword": " dog ", "frequency": 2, "relation": "at least"},
    "dog. dog.",
    "a dog and a dog here",
)
add(
    "keywords:frequency",
    {"keyword": "aa", "frequency": 2, "relation": "at least"},
    "aaa",
    "aaaa",
)

# --- keywords:letter_frequency ---------------------------------------------------------------
add(
    "keywords:letter_frequency",
    {"letter": "a", "let_frequency": 3, "let_relation": "at least"},
    "a a a",
    "A a A",
    "aa",
    "ä á à",
    "ÄA a",
)
add(
    "keywords:letter_frequency",
    {"letter": "Z", "let_frequency": 2, "let_relation": "less than"},
    "z",
    "Zz",
    "no letter",
)
add(
    "keywords:letter_frequency",
    {"letter": "i", "let_frequency": 1, "let_relation": "at least"},
    "İstanbul",
    "no",
)

# --- change_case -----------------------------------------------------------------------------
add(
    "change_case:english_lowercase",
    {},
    "this is all lowercase english text about the weather today.",
    "this is all lowercase english text about the weather Today.",
    "hello",
    "123 456",
    "the café is open and the food is good.",
    "ceci est un texte en français pour les enfants.",
    "this is english.\n\nanother paragraph of english text here.",
    "- item one is here\n- item two is there",
    "ß is a letter and the text is english.",
)
add(
    "change_case:english_capital",
    {},
    "THIS IS ALL CAPITAL ENGLISH TEXT ABOUT THE WEATHER TODAY.",
    "THIS IS ALL CAPITAL ENGLISH TEXT ABOUT THE WEATHER TODAy.",
    "HELLO",
    "THE STRASSE IS LONG, AND THE STREET IS WIDE.",
    "123 456",
    "CECI EST UN TEXTE EN FRANÇAIS POUR LES ENFANTS.",
    "THE ß CHARACTER IS HERE AND THE TEXT IS ENGLISH.",
)
CAPF = {"capital_frequency": 3, "capital_relation": "at least"}
CAPL = {"capital_frequency": 3, "capital_relation": "less than"}
for kw in (CAPF, CAPL):
    add(
        "change_case:capital_word_frequency",
        kw,
        "THE BIG DOG",
        "The BIG dog RAN",
        "I AM HERE",
        "I'M DONE NOW",
        "DON'T STOP ME",
        "NASA's AI/ML team",
        "CI/CD and TCP/IP",
        "U.S.A. and U.K. and EU",
        "STATE-OF-THE-ART design",
        "FOO_BAR and BAZ",
        "**IMPORTANT** NOTE: READ",
        "R&D is KEY",
        "WORD—WORD—WORD",
        "COVID-19 hit in 2020",
        "ÉCOLE ÜBER ÇA",
        "A B C",
        "MIXED case WoRdS HERE",
        "AT&T and P&G",
        "HELLO, WORLD! HOW",
        "(NOTE) [WARN] {INFO}",
        "\"QUOTED\" 'SINGLE' WORDS",
        "CAN'T WON'T SHAN'T",
        "1ST 2ND 3RD",
        "E.G. I.E. ETC.",
        "#HASHTAG @HANDLE $MONEY",
        "THE END.",
        "ОЧЕНЬ БОЛЬШОЙ ДОМ",
        "GO-TO OK? YES!",
    )

# --- language:response_language --------------------------------------------------------------
add(
    "language:response_language",
    {"language": "de"},
    "Das ist ein kurzer deutscher Text über das Wetter und die Stadt.",
    "This is English text about the weather.",
    "Guten Tag!",
    "Berlin München Hamburg",
)
add(
    "language:response_language",
    {"language": "hi"},
    "यह हिंदी में लिखा गया एक छोटा सा वाक्य है।",
    "This is English.",
)
add(
    "language:response_language",
    {"language": "ja"},
    "これは日本語の文章です。",
    "东京是日本的首都。",
)
add(
    "language:response_language",
    {"language": "en"},
    "This is plain English prose about the weather and the city.",
    "OK",
    "12345",
    "😀😀😀",
    "Le chat est sur la table et il dort.",
)

# --- combination -----------------------------------------------------------------------------
RP = {"prompt_to_repeat": "Write a poem about cats."}
add(
    "combination:repeat_prompt",
    RP,
    "Write a poem about cats. Cats are soft.",
    "write a poem about cats.\nCats are soft.",
    "  Write a poem about cats.",
    "Sure! Write a poem about cats. Cats are soft.",
    "Write a poem about cats",
    "Write  a poem about cats. Cats.",
    '"Write a poem about cats." Cats.',
)
add(
    "combination:two_responses",
    {},
    "Answer one.\n******\nAnswer two.",
    "Answer one.******Answer two.",
    "Answer one.\n******\nAnswer one.",
    "Answer one.\n******\n  Answer one.  ",
    "******\nAnswer one.\n******\nAnswer two.\n******",
    "Answer one.\n******\n******\nAnswer two.",
    "Answer one.\n*******\nAnswer two.",
    "Answer one.\n***\nAnswer two.",
    "Answer one.\n******\nAnswer two.\n******\nAnswer three.",
    "Only one answer.",
    "A\n******\nB",
)

# --- detectable_content ----------------------------------------------------------------------
add(
    "detectable_content:number_placeholders",
    {"num_placeholders": 2},
    "[name] and [address]",
    "[name] and [name]",
    "[] and []",
    "[a [b] c]",
    "[[x]]",
    "[multi\nline] [ok]",
    "[one]",
    "【name】 and 【address】",
    "[link](http://x) [another](y)",
    "\\[a\\] \\[b\\]",
)
add(
    "detectable_content:postscript",
    {"postscript_marker": "P.S."},
    "Body.\n\nP.S. Thanks.",
    "Body.\n\np.s. thanks.",
    "Body.\n\nP. S. Thanks.",
    "Body.\n\nPS Thanks.",
    "Body.\n\nP.S Thanks.",
    "Body. P.S. inline.",
    "Body.\n\n**P.S.** Thanks.",
    "Body.\n\nP.P.S. Thanks.",
    "Body.\n\nP.S.",
)
add(
    "detectable_content:postscript",
    {"postscript_marker": "P.P.S"},
    "Body.\n\nP.P.S Thanks.",
    "Body.\n\nP.P.S. Thanks.",
    "Body.\n\nP. P. S. Thanks.",
    "Body.\n\nPPS Thanks.",
    "Body.\n\nP.S. Thanks.",
    "Body.\n\np.p.s",
)
add(
    "detectable_content:postscript",
    {"postscript_marker": "P.P.S."},
    "Body.\n\nP.P.S. Thanks.",
    "Body.\n\nP.P.S",
    "Body.\n\nP.P.S Thanks.",
)
add(
    "detectable_content:postscript",
    {"postscript_marker": "Note:"},
    "Body.\n\nNote: thanks.",
    "Body.\n\nNOTE: thanks.",
    "Body.\n\nNote thanks.",
)

# --- detectable_format -----------------------------------------------------------------------
add(
    "detectable_format:constrained_response",
    {},
    "My answer is yes.",
    "My answer is Yes.",
    "my answer is yes.",
    "My answer is yes",
    "Well. My answer is no. Because.",
    "My answer is maybe.",
    "My  answer is yes.",
)
add(
    "detectable_format:json_format",
    {},
    '{"a": 1}',
    '```json\n{"a": 1}\n```',
    '```JSON\n{"a": 1}\n```',
    '```Json\n{"a": 1}\n```',
    '```\n{"a": 1}\n```',
    '```javascript\n{"a": 1}\n```',
    '```jsonc\n{"a": 1}\n```',
    '```json {"a": 1} ```',
    '  \n{"a": 1}\n  ',
    '```json\n{"a": 1}',
    '{"a": 1}\n```',
    "[1, 2, 3]",
    '"just a string"',
    "42",
    "null",
    "NaN",
    '{"a": 1}\nextra',
    "{'a': 1}",
    '```json\n```json\n{"a": 1}\n```',
    '``` json\n{"a": 1}\n```',
)
add(
    "detectable_format:multiple_sections",
    {"section_spliter": "SECTION", "num_sections": 2},
    "SECTION 1\nText.\nSECTION 2\nText.",
    "SECTION 1\nText.",
    "Section 1\nText.\nSection 2\nText.",
    "SECTION1\nText.\nSECTION2\nText.",
    "SECTION  1\nText.\nSECTION  2\nText.",
    "**SECTION 1**\nText.\n**SECTION 2**\nText.",
    "SECTION X\nText.\nSECTION Y\nText.",
    "SECTION 1 and SECTION 2 on one line",
    "SUBSECTION 1\nText.\nSUBSECTION 2\nText.",
    "SECTION 10\nText.\nSECTION 11",
)
add(
    "detectable_format:number_bullet_lists",
    {"num_bullets": 2},
    "* one\n* two",
    "- one\n- two",
    "* one\n- two",
    "  * one\n\t- two",
    "* one\n* two\n* three",
    "**bold** line\n* one\n* two",
    "* one\n\n\n* two",
    "+ one\n+ two",
    "1. one\n2. two",
    "• one\n• two",
    "-one\n-two",
    "*one\n*two",
    "* one\n---\n",
    "Intro\n* one\n* two\nOutro",
    "* one\n* two\n*",
    "* one\n*\n",
    "- one\r\n- two\r\n",
    "−one\n–two",
)
add(
    "detectable_format:number_highlighted_sections",
    {"num_highlights": 2},
    "*one* and *two*",
    "**one** and **two**",
    "*one* and **two**",
    "**one**",
    "* * and *two*",
    "*one\ntwo* and *three*",
    "***one*** text",
    "*one*two*",
    "_one_ and _two_",
    "** ** and ** **",
    "*a* *b*",
    "**bold** plain *it*",
)
add(
    "detectable_format:title",
    {},
    "<<Title>>\nBody.",
    "<< Title >>\nBody.",
    "<<>>\nBody.",
    "<< >>\nBody.",
    "<<<Title>>>\nBody.",
    "<<Tit\nle>>",
    "Body with <<title>> in the middle.",
    "«Title»\nBody.",
    "<Title>\nBody.",
    "<<>>>\nBody.",
    "<<<>>>\nBody.",
    "<< >> <<  >>\nBody.",
    "<<a>> <<>>\nBody.",
    "<<>><<Title>>",
    "**<<Title>>**",
    "<<Title>>",
)

# --- startend --------------------------------------------------------------------------------
END = {"end_phrase": "Any other questions?"}
add(
    "startend:end_checker",
    END,
    "Body. Any other questions?",
    "Body. any other questions?",
    "Body. Any other questions?  \n",
    'Body. "Any other questions?"',
    "Body. Any other questions?!",
    "Body. Any other questions",
    "Body. **Any other questions?**",
    "Body. Any other questions? 🙂",
    "Body. Any  other questions?",
    "Any other questions?",
)
add(
    "startend:quotation",
    {},
    '"Quoted."',
    '  "Quoted."  \n',
    "“Quoted.”",
    '"',
    '""',
    "'Quoted.'",
    '"Quoted." Then more.',
    '"First" and "second"',
    '```\n"Quoted."\n```',
)

# --- punctuation:no_comma --------------------------------------------------------------------
add(
    "punctuation:no_comma",
    {},
    "No commas here.",
    "One, two.",
    "Fullwidth，comma.",
    "Arabic، comma.",
    "Ideographic、comma.",
    "Number 1,000.",
    "Trailing comma,",
)


def main() -> None:
    out = HERE / "edge_cases.jsonl"
    n = 0
    with out.open("w", encoding="utf-8") as f:
        for instruction_id, kwargs, responses in CASES:
            for response in responses:
                n += 1
                case = {
                    "id": f"edge-{n:04d}",
                    "prompt": f"(edge case for {instruction_id})",
                    "response": response,
                    "instruction_id_list": [instruction_id],
                    "kwargs": [kwargs],
                }
                f.write(json.dumps(case, ensure_ascii=False) + "\n")
    print(f"{n} cases -> {out}")


if __name__ == "__main__":
    main()
