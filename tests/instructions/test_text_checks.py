"""length_constraints, keywords, change_case and language checkers, and the text helpers."""

from __future__ import annotations

from typing import Any

import pytest

from assay.errors import InputError
from assay.instructions import check_one
from assay.instructions.language import detect_language
from assay.instructions.text import capitalized_words, count_sentences, count_words


def followed(instruction_id: str, response: str, **kwargs: Any) -> bool:
    return check_one(instruction_id, kwargs, "prompt", response).followed


def test_word_count_relations() -> None:
    assert count_words("It's a well-known fact: 3 cats.") == 8  # It, s, well, known: \w+ runs
    assert followed(
        "length_constraints:number_words", "one two three", relation="less than", num_words=4
    )
    assert not followed(
        "length_constraints:number_words", "one two three four", relation="less than", num_words=4
    )
    assert followed(
        "length_constraints:number_words", "one two three four", relation="at least", num_words=4
    )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("One. Two! Three? Four", 4),
        ("Dr. Smith met Mr. Jones. They talked.", 2),
        # NLTK's Punkt, IFEval's splitter, has no abbreviation "e.g" or "etc": both end a sentence
        ("We use e.g. apples and etc. in lists. Then stop.", 4),
        ("Use a pen, e.g. a blue one. Then sign.", 3),
        ("See fig. The chart shows it.", 2),
        ("The answer is no. We left.", 2),
        ("we sat in the sun. then we left. no. it was fine.", 4),  # "sun", "no": words
        ("P.S. Remember to call.", 2),
        # an initial in a name, or an abbreviation before a name, goes on
        ("Franklin D. Roosevelt was president. He won.", 2),
        ("Books by J. R. R. Tolkien are long. Read them.", 2),
        ("The U.S. Department of State is here. It is big.", 2),
        ("Send it to Washington D.C. - they will read it.", 1),
        # ... but not before a capitalised function word
        ("I live in the U.S. The weather is fine.", 2),
        ("It is point A to point B. It works.", 2),
        ("I.\nIntroduction to the topic.\nII.\nBody.", 4),  # list labels at line start
        # as in Punkt, a sentence also ends right before a quote, bracket or "*" ...
        ("Is that a thing?), but yes.", 2),
        ('Stop!", he said.', 2),
        ('{"a": "One.", "b": "Two."}', 2),
        ("Note.**Bold** next.", 2),
        ('{"a": "One."\n}', 2),
        # ... but closing quotes or brackets at the end, and ends inside a run, add none
        ('I am done.\n"', 1),
        ("Use tools (etc.). Then stop.", 2),
        ("A heading\nwithout punctuation\nstill one sentence.", 1),
        ('He said "stop." Then left.', 2),
        ("Wait... what? Yes.", 2),  # an ellipsis before a lowercase word goes on
        ("Wait... What? Yes.", 3),
        ("1. first item\n2. second item", 1),
        ("", 0),
    ],
)
def test_sentence_counts(text: str, expected: int) -> None:
    assert count_sentences(text) == expected


def test_number_sentences_relation() -> None:
    assert followed(
        "length_constraints:number_sentences", "A. B. C.", relation="less than", num_sentences=4
    )
    assert not followed(
        "length_constraints:number_sentences", "A. B. C.", relation="at least", num_sentences=4
    )


def test_paragraphs_split_by_markdown_divider() -> None:
    assert followed(
        "length_constraints:number_paragraphs", "one\n***\ntwo\n***\nthree", num_paragraphs=3
    )
    assert not followed(
        "length_constraints:number_paragraphs", "one\n***\n***\nthree", num_paragraphs=2
    )
    assert not followed("length_constraints:number_paragraphs", "one\n\ntwo", num_paragraphs=2)


def test_nth_paragraph_first_word() -> None:
    response = 'Intro here.\n\n"Summer, is warm.\n\nEnd.'
    kwargs = {"num_paragraphs": 3, "nth_paragraph": 2}
    assert followed(
        "length_constraints:nth_paragraph_first_word", response, first_word="summer", **kwargs
    )
    assert not followed(
        "length_constraints:nth_paragraph_first_word", response, first_word="winter", **kwargs
    )
    assert not followed(
        "length_constraints:nth_paragraph_first_word",
        "Summer.\n\nx",
        first_word="summer",
        num_paragraphs=3,
        nth_paragraph=1,
    )
    with pytest.raises(InputError, match="nth_paragraph"):
        check_one(
            "length_constraints:nth_paragraph_first_word",
            {"num_paragraphs": 2, "nth_paragraph": 3, "first_word": "a"},
            "p",
            "x",
        )


def test_keywords_existence_and_forbidden_words() -> None:
    assert followed("keywords:existence", "Mountains and RIVERS.", keywords=["river", "mountain"])
    assert not followed("keywords:existence", "Mountains only.", keywords=["river", "mountain"])
    assert followed("keywords:forbidden_words", "Rivers flow.", forbidden_words=["river"])
    assert not followed("keywords:forbidden_words", "A River flows.", forbidden_words=["river"])


def test_keyword_and_letter_frequency() -> None:
    text = "Cat, cat, CATALOG."
    assert followed("keywords:frequency", text, keyword="cat", relation="at least", frequency=3)
    assert not followed(
        "keywords:frequency", text, keyword="cat", relation="less than", frequency=3
    )
    # white space around the keyword is not part of it
    assert followed(
        "keywords:frequency", "dog. dog.", keyword=" dog ", relation="at least", frequency=2
    )
    assert followed(
        "keywords:letter_frequency", text, letter="a", let_relation="at least", let_frequency=4
    )
    assert not followed(
        "keywords:letter_frequency", text, letter="z", let_relation="at least", let_frequency=1
    )
    with pytest.raises(InputError, match="relation"):
        check_one(
            "keywords:frequency", {"keyword": "a", "relation": "more", "frequency": 1}, "p", "x"
        )


def test_case_instructions() -> None:
    assert followed("change_case:english_lowercase", "this is all lowercase and plain english.")
    assert not followed("change_case:english_lowercase", "This is not.")
    assert not followed("change_case:english_lowercase", "c'est une phrase en français et le reste")
    assert followed("change_case:english_capital", "THIS IS ALL IN CAPITALS FOR YOU.")
    assert not followed("change_case:english_capital", "THIS IS mostly CAPITALS.")


def test_capital_word_frequency_counts_all_caps_tokens() -> None:
    assert capitalized_words("I'm in the U.S. with NASA and COVID-19, Not This") == [
        "I",
        "U.S.",
        "NASA",
        "COVID-19",
    ]
    # NLTK's word tokenizer keeps "/", "_" and an apostrophe inside a name in one token, and
    # splits at "&", "#", ":" and dashes
    assert capitalized_words("Robert O'Brien of the AI/ML team, FOO_BAR") == ["AI/ML", "FOO_BAR"]
    assert capitalized_words("R&D NOTE:THIS WORD—WORD") == [
        "R",
        "D",
        "NOTE",
        "THIS",
        "WORD",
        "WORD",
    ]
    assert capitalized_words("DON'T GONNA TODAY'S O'NEAL") == [
        "DO",
        "N'T",
        "GON",
        "NA",
        "TODAY",
        "'S",
        "O'NEAL",
    ]
    assert followed(
        "change_case:capital_word_frequency",
        "USE CAPS sparingly",
        capital_relation="less than",
        capital_frequency=3,
    )
    assert not followed(
        "change_case:capital_word_frequency",
        "USE CAPS sparingly",
        capital_relation="at least",
        capital_frequency=3,
    )


@pytest.mark.parametrize(
    ("text", "code"),
    [
        ("The cat sat on the mat and it was happy with the day.", "en"),
        ("Der Hund ist nicht im Haus, und die Katze auch nicht.", "de"),
        ("Il gatto è sul tavolo e non vuole scendere.", "it"),
        ("Você está em casa com os amigos para o jantar.", "pt"),
        ("Tôi là người Việt Nam và tôi yêu đất nước của tôi.", "vi"),
        ("Habari yako? Mimi ni mwalimu na ninapenda kazi yangu sana.", "sw"),
        ("Tämä on hyvä päivä ja hän on kotona, mutta ei ole kiireinen.", "fi"),
        ("यह एक अच्छा दिन है और हम सब खुश हैं।", "hi"),
        ("हे एक चांगले पुस्तक आहे आणि मला ते आवडते.", "mr"),
        ("यो राम्रो किताब हो र मलाई पनि मन पर्छ।", "ne"),
        ("बिहान बिराटनगरको संस्कृति भ्रमण गर्नुहोस्। होटलमा आराम गर्नुहोस्।", "ne"),
        # Marathi's genitive and "in" written onto the word, no listed function word
        ("शाळेच्या मैदानामध्ये मुले खेळतात", "mr"),
        ("पुण्याच्या बाजारपेठेच्या गल्लीत", "mr"),
        ("Name: Jo Doe\nEmail: jo@mail.com", None),  # not "pt" for the "com"
        # an address right after a tag is no more language than one after a space
        ("<p class='x'>jo@correio.com.br</p> The cat sat on the mat and it was happy.", "en"),
        ("Это хорошая книга, и мы её читаем.", "ru"),
        ("Това е хубава книга и ние я четем със удоволствие, ъгъл.", "bg"),
        ("هذه مدينة جميلة في الصباح.", "ar"),
        ("این یک کتاب خوب است که من آن را دوست دارم.", "fa"),
        ("یہ ایک اچھی کتاب ہے اور مجھے پسند ہے۔", "ur"),
        ("안녕하세요 반갑습니다", "ko"),
        ("สวัสดีครับ", "th"),
        ("ನಮಸ್ಕಾರ", "kn"),
        ("வணக்கம்", "ta"),
    ],
)
def test_detect_language(text: str, code: str | None) -> None:
    assert detect_language(text) == code


def test_response_language_checker() -> None:
    assert followed("language:response_language", "यह एक अच्छा दिन है।", language="hi")
    assert not followed("language:response_language", "This is English, of course.", language="hi")
    assert not followed("language:response_language", "12345", language="en")
