"""Loaded before any in-process pytester run: pytester drops the modules first imported
inside a run when it ends, so a class imported twice fails the library's isinstance checks
(RunsData) and an extension module imported twice fails to load (numpy.fft, through
scipy.special), depending on which test a worker runs first."""

import numpy.fft
import scipy.special

import gatecal

gatecal.read_runs, gatecal.recommend_gate, gatecal.check_gate  # noqa: B018
numpy.fft, scipy.special  # noqa: B018
