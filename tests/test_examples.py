"""The `goldfive run` example of the README and the docs works as written (headless). The
Python examples of both are run by tests/test_docs.py."""

from click.testing import CliRunner

from goldfive.cli import main


def test_the_readme_run_example_completes(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path))
    monkeypatch.setattr("examples.hello_agent.DELAY_S", 0.0)
    result = CliRunner().invoke(
        main,
        ["run", "examples.hello_agent:agent", "--goal", "write a haiku", "--plan", "examples/hello_plan.json", "--headless"],
    )
    assert result.exit_code == 0, result.output
    assert "run_completed" in result.output
    assert "3/3 tasks completed" in result.output
