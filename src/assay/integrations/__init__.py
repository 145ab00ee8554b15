"""assay inside other tools: :mod:`assay.integrations.inspect_ai` (an inspect_ai scorer),
:mod:`assay.integrations.promptfoo` (a promptfoo assertion),
:mod:`assay.integrations.deepeval` (a deepeval metric), :mod:`assay.integrations.ragas` (a ragas
metric), :mod:`assay.integrations.llama_index` (a LlamaIndex evaluator),
:mod:`assay.integrations.haystack` (a Haystack evaluator component) and
:mod:`assay.integrations.grounding` (``assay.check_grounding``, one call from your own code),
all backed by the model-free ``learned`` claim checker through
:mod:`assay.integrations._grounding`.

The top of assay's layers: modules here import assay's own layers and their tool, and nothing
in assay imports them (``tests/test_layering.py``) but the package's own lazy
``assay.check_grounding``.
"""
