"""The lookup every tool that takes a trained pipeline starts with: its
``sampled_spancat`` component by name (``span_component``)."""
from spacy.language import Language

from ..pipeline.sampled_spancat import SampledSpanCategorizer

__all__ = ["span_component"]


def span_component(nlp: Language, name: str) -> SampledSpanCategorizer:
    """The ``sampled_spancat`` component ``name`` of ``nlp``; an error that
    lists the pipeline's components otherwise."""
    components = ", ".join(nlp.pipe_names) or "none"
    if name not in nlp.pipe_names:
        raise ValueError(f"the pipeline has no component {name!r}; its components: {components}")
    pipe = nlp.get_pipe(name)
    if not isinstance(pipe, SampledSpanCategorizer):
        raise ValueError(
            f"the component {name!r} is a {type(pipe).__name__}, not a sampled_spancat; "
            f"the pipeline's components: {components}"
        )
    return pipe
