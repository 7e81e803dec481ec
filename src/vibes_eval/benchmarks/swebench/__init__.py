"""SWE-bench: grade model patches as the official harness does, in the project's Docker
runner, and refuse the forgeries it accepts (docs/swebench.md).

``config`` settings, ``tasks`` the instances, ``samples`` the predictions, ``run`` one
prediction in its instance's container, ``judge`` observations to a verdict, ``scoring``
the official grading rules and metrics, ``prompting`` the generation side, ``benchmark``
the wiring; ``env/`` the images, specs and log folders, ``integrity/`` the static checks
and the pytest probe."""
