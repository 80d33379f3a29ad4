"""mvlsib-build: construct, validate, publish and evaluate the MVL-SIB benchmark."""

__version__ = "0.1.0"
