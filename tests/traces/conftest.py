"""The fixture generator is a script run by hand (it needs opentelemetry-sdk,
opentelemetry-exporter-otlp-proto-common and openinference-semantic-conventions, which the
test environment does not install): pytest's doctest collection must not import it."""

collect_ignore = ["fixtures/make_fixtures.py", "fixtures/make_traceloop_fixtures.py"]
