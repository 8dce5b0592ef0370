"""The README's `goldfive run` example works as written (headless)."""

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


README_OUTPUTS = [
    "True 2/2 tasks completed",
    "told: [user_steering]use the canary[/user_steering]\nTrue {'deployed': 'api@1.2'}",
    "wrote notes/a.md\nwrote notes/ssh-config\nAPPROVED_BY_RULE rule notes/a.md\nEDITED_APPROVED ann notes/ssh-config",
]


def test_the_readme_library_examples_run_as_written(capsys):
    import re
    from pathlib import Path

    readme = Path(__file__).resolve().parent.parent / "README.md"
    blocks = re.findall(r"```python\n(.*?)```", readme.read_text(), re.S)
    assert len(blocks) == len(README_OUTPUTS)
    for code, expected in zip(blocks, README_OUTPUTS):
        exec(compile(code, "README.md", "exec"), {"__name__": "readme_example"})
        assert capsys.readouterr().out.strip() == expected


def test_the_readme_stuck_agent_is_caught_with_its_evidence(tmp_path, monkeypatch):
    monkeypatch.setenv("GOLDFIVE_DATA_DIR", str(tmp_path))
    result = CliRunner().invoke(
        main, ["run", "examples.stuck_agent:agent", "--goal", "ship 1.2", "--plan", "examples/stuck_plan.json", "--headless"]
    )
    assert result.exit_code == 1, result.output  # headless: nobody can answer the escalation
    out = result.output
    assert "LOOPING_TOOL_CALL INFO [ship]: looks stuck: deploy called 5 times with the same arguments (5 pieces of evidence" in out
    assert "agent was told: [user_steering][goldfive steering] LOOPING_TOOL_CALL: looks stuck: deploy called 10 times" in out
    assert "HUMAN_INTERVENTION_REQUIRED CRITICAL" in out and "GOLDFIVE_PAUSE_ESCALATE" in out
