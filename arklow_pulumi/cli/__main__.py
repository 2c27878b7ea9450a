from arklow_pulumi.cli.main import main

main()
