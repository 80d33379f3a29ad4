"""JSON Schemas (draft 2020-12) shipped as package data, and validators for them."""
