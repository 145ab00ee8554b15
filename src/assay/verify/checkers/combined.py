"""``<model-free checker>+<model>``: a verdict from the first, a second opinion from the second.

``learned+llamacpp/smollm2`` decides every claim with the learned checker and also asks the
embedded model (single-pass where it gives logprobs), whose probability is kept on each claim
check as :class:`~assay.verify.types.SecondOpinion`. The summary reports the second opinion's
own detection metrics on the same answers (``detection_second_opinion``), so a user sees what
a model adds, or does not, without a second run. The two are not averaged: an average is a
weighting, and a weighting would have to be fitted on labelled data that is not the run's own.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from ..types import Claim, ClaimCheck, ClaimChecker, Evidence, SecondOpinion


class CombinedChecker:
    def __init__(self, primary: ClaimChecker, second: ClaimChecker) -> None:
        self.primary = primary
        self.second = second
        self.name = f"{primary.name}+{second.name}"

    async def check(self, claim: Claim, evidence: Sequence[Evidence]) -> ClaimCheck:
        verdict, other = await asyncio.gather(
            self.primary.check(claim, evidence), self.second.check(claim, evidence)
        )
        opinion = SecondOpinion(
            checker=other.checker or self.second.name,
            p_supported=other.p_supported,
            probability_source=other.probability_source,
            failure=other.failure,
        )
        return verdict.model_copy(update={"second_opinion": opinion})
