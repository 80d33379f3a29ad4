"""The families whose processors need torchvision (and timm for two vision towers).

They run in the eval session (noxfile.py), which installs the ``[eval]`` extra with torchvision
and timm; ``test_environment.py`` fails there if either cannot run.
"""
