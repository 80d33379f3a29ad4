"""The four MVL-SIB tasks, as one table (see ``Task`` for the columns).

The table lives in the standalone release reader (``release_format/mvl_sib.py``) because
that file ships alone in every release and must know the tasks; the toolkit reads the
same table from there. Adding a task: docs/contributing/task.md.
"""

from mvlsib.release_format.mvl_sib import DEFAULT_K_VALUES, K_VALUES, TASK_ALIASES, TASK_BY_NAME, TASK_TABLE, TASKS, Task

CROSS_MODAL = tuple(t.name for t in TASK_TABLE if t.cross_modal)
TEXT_ONLY = tuple(t.name for t in TASK_TABLE if not t.cross_modal)

__all__ = ["DEFAULT_K_VALUES", "Task", "TASK_TABLE", "TASKS", "TASK_BY_NAME", "TASK_ALIASES", "K_VALUES", "CROSS_MODAL", "TEXT_ONLY"]
