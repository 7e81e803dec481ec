"""vibes-eval: measure how well language models write code."""

__version__ = "0.1.0"
