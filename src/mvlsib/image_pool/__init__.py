"""The topic-image pool: manifest, curation checks, licences, duplicates, gallery."""
