"""From a model's scores to decisions, written once for every component,
loss and tool: the softmax family (``softmax``) and the decision rule of
thresholds with the checks of their values (``thresholds``). Nothing here
knows a pipeline: spans/, pipeline/ and evaluation/ all build on it."""
