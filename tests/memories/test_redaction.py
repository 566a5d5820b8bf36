"""Secrets found in text, kind by kind, and ordinary text left alone (memories/redaction.py).
Every write path is in test_privacy_writes.py."""

import pytest

from memories.redaction import cn_id_valid, iban_valid, luhn_valid, redact, redact_json

SECRETS = [
    ("My password for the company system is SuperSecret123!", "password", "SuperSecret123!"),
    ('The master password is "correct horse battery staple".', "password", "horse battery"),
    ("I reset my Netflix password to sunflower1987 yesterday.", "password", "sunflower1987"),
    ("username mkowalski, password Tr0ub4dor&3", "password", "Tr0ub4dor&3"),
    ("Connect with postgres://app:Zx9!pQ2mw@db.internal:5432/prod", "password", "Zx9!pQ2mw"),
    ("Garage door code: 4417, in case the neighbour needs in.", "pin", "4417"),
    ("My debit card PIN is 0382.", "pin", "0382"),
    ("Pay with card 4242 4242 4242 4242, expiry 09/28.", "card_number", "4242 4242 4242"),
    ("The company Amex is 3782-822463-10005.", "card_number", "822463"),
    ("Put down SSN 078-05-1120 on the form.", "ssn", "078-05-1120"),
    ("Wire it to IBAN GB33BUKB20201555555555 please.", "iban", "20201555555555"),
    ("Account NL91 ABNA 0417 1643 00.", "iban", "0417 1643"),
    ("key sk-proj-8fJ2kLm9QwErTyUiOpAsDfGhJkLzXcVb", "api_key", "8fJ2kLm9QwErTyUiOpAsDfGh"),
    ("AWS access key AKIAIOSFODNN7EXAMPLE", "api_key", "AKIAIOSFODNN7EXAMPLE"),
    ("ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ12", "api_key", "ghp_1a2B3c4D5e6F"),
    ("the api key is 9f8e7d6c5b4a39281706f5e4d3c2b1a0", "api_key", "9f8e7d6c5b4a3928"),
    (
        "cookie eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9P",
        "token",
        "dozjgNryP4J3jVmNHl0w5N",
    ),
    ("Random deploy token: q7Rk2Lp9Vx4Nz8Tb3Wm6Yh1D", "token", "q7Rk2Lp9Vx4Nz8Tb3Wm6Yh1D"),
    (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----",
        "private_key",
        "MIIEowIBAAKCAQEA",
    ),
    ("My passport number is X7294051.", "national_id", "X7294051"),
    ("我的身份证号是11010519491231002X，帮我填一下表。", "national_id", "11010519491231002X"),
    ("身份证 440524188001010014 是我爸的。", "national_id", "440524188001010014"),
    ("我的支付宝支付密码是 905731", "password", "905731"),
    ("WiFi密码是fengye8899，来我家就能连。", "password", "fengye8899"),
    ("验证码：483920，别告诉别人。", "pin", "483920"),
    # JSON written as text, a URL without a user name, an app password in four groups,
    # full-width digits, a one-time code
    ('Config: {"password": "Pelican9Tree"}', "password", "Pelican9Tree"),
    ("REDIS_URL=redis://:RedisPw6655@cache:6379/0", "password", "RedisPw6655"),
    ("Gmail app password: abcd efgh ijkl mnop", "password", "ijkl mnop"),
    ("card ４１１１１１１１１１１１１１１１", "card_number", "４１１１１１１１"),
    ("１１０１０５１９４９１２３１００２Ｘ 是我的", "national_id", "１１０１０５１９"),
    ("OTP: 483920", "pin", "483920"),
    ("验证码 551903 五分钟内有效", "pin", "551903"),
    ("my login is jdoe and my password Lz8Kq2Wv", "password", "Lz8Kq2Wv"),
    # a value after "is going to be", "is:" and a quote, "is the same:"
    ("my new password is going to be Hunter2024", "password", "Hunter2024"),
    ("The password is: 'x9!Lm#q2'", "password", "x9!Lm#q2"),
    ("the password is the same: hunter2", "password", "hunter2"),
    # an IBAN in lower case or with dashes, an SSN after its label alone, a card in pairs of spaces
    ("my IBAN is fr1420041010050500013m02606", "iban", "fr1420041010050500013m02606"),
    ("IBAN: FR14-2004-1010-0505-0001-3M02-606", "iban", "FR14-2004-1010"),
    ("SSN 123456789", "ssn", "123456789"),
    ("my card is 4000  0000  0000  0002", "card_number", "4000  0000  0000  0002"),
]


@pytest.mark.parametrize(("text", "kind", "secret"), SECRETS)
def test_a_secret_is_replaced_by_its_kind(text, kind, secret, settings):
    redacted = redact(text)
    assert secret not in redacted.text
    assert f"[redacted: {kind}]" in redacted.text
    assert redacted.counts[kind] >= 1


ORDINARY = [
    "Your PIN should be 4 digits.",
    "My password should be stronger.",
    "The password is going to be emailed to you.",
    "The password is the same - I never change it.",
    "order 2ae9e525-ee70-43d2-ba80-76ab658e9865",
    "My order number is 1234567890123456, it should arrive Friday.",
    "Tracking: 1Z999AA10123456784 via UPS.",
    "Call me at 415-555-0123 or +1 (415) 555-0199.",
    "我的手机号是13812345678，有事打给我。",
    "The meeting moved to 2024-03-15 at 10:30.",
    "commit 3f2a9c1b7d4e5f6a8b9c0d1e2f3a4b5c6d7e8f90 fixed the bug",
    "The request id was 550e8400-e29b-41d4-a716-446655440000.",
    "def calculateTotalPrice2024(items): return sum(i.price for i in items)",
    "https://docs.google.com/document/d/1BxiMVs0XRA5nFMdKvBdBZjgmUUqptlbs74OgvE2upms/edit",
    "My password is too weak, I need a new one.",
    "I forgot my password again, ugh.",
    "What is my password?",
    "The secret is out: we're moving to Lisbon!",
    "我忘了密码，怎么重置？",
    "The ISBN is 978-0-306-40615-7.",
    "My student number is 2021304567.",
    "My password is very long and hard to type.",
    "My OTP is annoying to type.",
    "The wifi password is what they gave me at check-in.",
    "ＡＢＣ全角字母和１２３数字",
    "My password manager is great, I changed my password 3 times this year.",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_left_as_it_is(text):
    redacted = redact(text)
    assert (redacted.text, dict(redacted.counts)) == (text, {})


def test_a_text_holding_several_secrets_says_how_many_of_each():
    redacted = redact("my pin is 1234 and my password is hunter2, card 4111 1111 1111 1111")
    assert dict(redacted.counts) == {"pin": 1, "password": 1, "card_number": 1}
    assert redacted.text == (
        "my pin is [redacted: pin] and my password is [redacted: password], "
        "card [redacted: card_number]"
    )


def test_redacted_text_is_redacted_no_further():
    once = redact("My password is hunter22.").text
    assert redact(once).text == once and not redact(once).counts


def test_json_strings_are_redacted_and_keys_kept():
    value, counts = redact_json({"note": "PIN: 9911", "list": ["ok", {"why": "password=abc123"}]})
    assert value == {
        "note": "PIN: [redacted: pin]",
        "list": ["ok", {"why": "password=[redacted: password]"}],
    }
    assert dict(counts) == {"pin": 1, "password": 1}


def test_a_json_key_holding_a_secret_or_naming_one_for_its_value_is_redacted():
    value, counts = redact_json(
        {
            "sk-proj-8fJ2kLm9QwErTyUiOpAsDfGhJkLzXcVb": "openai",
            "wifi_password": "bluecabin7",
            "apiKey": "k-123",
            "door-code": 4455,
            "db": {"password": ["first1", "second2"]},
            # Names of no secret, or values that cannot be one: kept.
            "password_hint": "the dog's name",
            "has_password": True,
            "secret": "the surprise party",  # a secret with no digit is no credential
            "code": "python",
        }
    )
    assert value == {
        "[redacted: api_key]": "openai",
        "wifi_password": "[redacted: password]",
        "apiKey": "[redacted: api_key]",
        "door-code": "[redacted: pin]",
        "db": {"password": ["[redacted: password]", "[redacted: password]"]},
        "password_hint": "the dog's name",
        "has_password": True,
        "secret": "the surprise party",
        "code": "python",
    }
    assert dict(counts) == {"api_key": 2, "password": 3, "pin": 1}
    both, _ = redact_json({"token AKIAIOSFODNN7EXAMPLE": 1, "token AKIAIOSFODNN7EXAMPLF": 2})
    assert list(both.values()) == [1, 2]  # two keys redacted alike: both kept


def test_a_setting_turns_kinds_off(settings):
    settings.REDACTION_DISABLED_KINDS = ["pin"]
    assert redact("My PIN is 0382, password is hunter22").text == (
        "My PIN is 0382, password is [redacted: password]"
    )


def test_an_unknown_kind_in_the_setting_is_a_configuration_error(settings):
    from memories.checks import redaction_kinds_check

    settings.REDACTION_DISABLED_KINDS = ["pins"]
    (error,) = redaction_kinds_check(None)
    assert error.id == "memories.E002" and "pins" in error.msg


def test_check_digits():
    assert luhn_valid("4242424242424242") and not luhn_valid("4242424242424241")
    assert cn_id_valid("11010519491231002X") and not cn_id_valid("110105194912310021")
    assert iban_valid("GB33BUKB20201555555555") and not iban_valid("GB33BUKB20201555555556")
