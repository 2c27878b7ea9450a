from arklow_pulumi.cli.main import run

run()
