"""JUnit XML (pytest, Maven Surefire/Failsafe, Gradle, promptfoo): testcases, runs, verdicts."""
