"""Token estimates without a tokenizer: prompt budgets (prompt context, the SOUL size limit)."""

import re

HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def estimated_tokens(text: str) -> int:
    """About one token per Han character and per four other characters."""
    han = len(HAN.findall(text))
    return han + -(-(len(text) - han) // 4)
