"""The release format: the columns and the standalone reader (``mvl_sib.py``) that ships in every release."""
