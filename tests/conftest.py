pytest_plugins = ["tests.harness.mosquitto", "tests.harness.postgres", "tests.harness.victoria"]
