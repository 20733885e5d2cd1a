"""Fine-tuned transformers on the CPU (issue 30): the fine-tuning trials and
the probe of the gradient that reaches the encoder."""
