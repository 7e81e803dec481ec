"""The languages with a test `main` (``base``: what each provides; ``programs``: C++, Go,
JavaScript, Java, MultiPL-E's scripts; ``cpp``: C++'s two translation units), their
policy filter (``policy``), and which benchmark a file belongs to (``detect``)."""
