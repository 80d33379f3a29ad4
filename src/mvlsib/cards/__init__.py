"""Dataset card templates and rendering."""
