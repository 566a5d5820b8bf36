"""One reflection cycle for one user: load (state.py), plan (plan.py), apply (apply.py).

The plan is made in memory, with no transaction open (the detector may embed or call an LLM),
in the design's order: scan new memories → trends → behaviors → preferences → cores →
contradictions. `cycle_apply` then writes it in the caller's transaction, together with the
steps that are plain SQL over the user's traits (trend windows that ended, decay) and the scan
marks. The lifecycle's numbers are reflection/rules.py's.
"""
