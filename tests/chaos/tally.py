"""Counters the chaos tests add to, and the summary table printed at the end of a session.

One process-wide ``TALLY``: each test adds what it did (runs, controls, acks, ...) and what
went wrong (lost, duplicated, hangs, gaps). The tests assert on their own counts; the table
is the figure a person reads after a long pass.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class Tally:
    counts: Counter[str] = field(default_factory=Counter)
    executors: set[str] = field(default_factory=set)
    seconds: Counter[str] = field(default_factory=Counter)

    def add(self, **kw: int) -> None:
        for key, n in kw.items():
            self.counts[key] += n

    def time(self, part: str, started: float) -> None:
        self.seconds[part] += time.monotonic() - started

    def lines(self) -> list[str]:
        c = self.counts
        out: list[str] = []
        if c["runs"]:
            execs = "both executors" if len(self.executors) == 2 else ", ".join(sorted(self.executors))
            out.append(
                f"{c['controls']:,} random controls across {c['runs']:,} runs in {execs}, "
                f"{c['acked_once']:,} acked exactly once, {c['lost']} lost, {c['duplicated']} duplicated, "
                f"{c['stray_acks']} stray acks, {c['hangs']} hangs, {c['sequence_gaps']} sequence gaps, "
                f"{c['terminal_not_last']} runs whose terminal event was not last"
            )
            out.append(
                f"  acks: {c['ack_success']:,} SUCCESS, {c['ack_failure']:,} FAILURE, "
                f"{c['ack_unsupported']:,} UNSUPPORTED; {c['refused_invalid']:,} refused as invalid or unencodable"
            )
        if c["inject_sent"]:
            out.append(
                f"{c['inject_sent']:,} INJECT_MESSAGE sent, {c['inject_parked']:,} parked: "
                f"{c['inject_delivered']:,} delivered ({c['inject_delivered_next_turn']:,} via the next turn), "
                f"{c['inject_returned']:,} returned at run end, {c['inject_lost']} lost, "
                f"{c['inject_both']} both delivered and returned, {c['inject_twice']} delivered twice"
            )
        if c["grpc_calls"]:
            codes = ", ".join(f"{k[5:]} {v:,}" for k, v in sorted(c.items()) if k.startswith("code_"))
            out.append(
                f"{c['grpc_calls']:,} fuzzed gRPC calls from concurrent clients on {c['grpc_servers']} servers "
                f"({codes}); {c['grpc_unknown']} UNKNOWN, {c['grpc_leaky_detail']} details naming a Python "
                f"exception, {c['grpc_run_gaps']} hosted runs with a gap, {c['grpc_run_unfinished']} unfinished"
            )
        if c["storm_clients"]:
            out.append(
                f"{c['storm_clients']:,} subscribers killed mid-stream in {c['storm_rounds']} storms; "
                f"after settling: fds {c['storm_fd_delta']:+d}, asyncio tasks {c['storm_task_delta']:+d}, "
                f"RSS {c['storm_rss_kib_delta']:+,} KiB, server subscriptions left {c['storm_subs_left']}"
            )
        if c["recordings"]:
            out.append(
                f"{c['recordings']} damaged recordings opened: {c['recording_refused']} refused with one error, "
                f"{c['recording_skipped_lines']} lines skipped, {c['recording_bad']} tracebacks/hangs "
                f"(known defects xfailed: {c['recording_xfail']})"
            )
        if c["kills"]:
            out.append(
                f"{c['kills']} SIGKILLs ({c['kill_run']} goldfive run, {c['kill_serve']} goldfive serve): "
                f"{c['kill_integrity_ok']} integrity_check ok, {c['kill_runs_checked']} recorded runs gap-free "
                f"from 0 ({c['kill_events']:,} events), {c['kill_restart_ok']} restarts completed"
            )
        if c["trust_ops"]:
            out.append(
                f"{c['trust_ops']:,} random runner-token operations against a real hub ({c['trust_restarts']} restart): "
                f"{c['trust_refused']:,} takeovers refused, {c['trust_forged']:,} forged events of {c['trust_kinds']} kinds, "
                f"{c['trust_hellos']:,} hellos alone, {c['trust_routed']} decisions routed and {c['trust_reported']} "
                f"reported (unverified); {c['trust_imports']} modules imported, 0 runs changed hands"
            )
        if c["web_requests"]:
            out.append(
                f"{c['web_requests']:,} random Host/Origin/cookie/token requests to goldfive web: {c['web_in']:,} let in, "
                f"{c['web_redirected']:,} redirected, {c['web_refused']:,} refused; {c['web_wrong']} answered wrongly, "
                f"{c['web_token_lines']} output lines with the token (the start URL), {c['web_wrong_token_lines']} with a wrong one"
            )
        if c["escape_strings"]:
            out.append(
                f"{c['escape_strings']:,} random escape-laden runner strings: {c['escape_outputs']} ctl outputs and "
                f"{c['escape_lines']:,} event lines checked, {c['escape_leaks']} control characters reached them"
            )
        if c["notify_rounds"]:
            out.append(
                f"{c['notify_notices']:,} notices in {c['notify_rounds']} bursts: {c['notify_commands']:,} commands run "
                f"(coalesced per run), {c['notify_dropped']:,} dropped and counted, {c['notify_starved']} runs starved"
            )
        if c["auth_refused_streams"]:
            out.append(
                f"{c['auth_refused_streams']} refused clients writing on Connect/ConnectShared/StreamEvents: "
                f"{c['auth_internal']} told INTERNAL instead of UNAUTHENTICATED"
            )
        if c["resume_rounds"]:
            out.append(
                f"{c['resume_rounds']} rounds of {c['resume_racers']} 'goldfive resume' processes on one run at once: "
                f"{c['resume_winner_not_one']} rounds without exactly one runner, {c['resume_ran_twice']} tasks run or "
                f"recorded twice, {c['resume_loser_bad_exit']} refused processes without exit 2 and one line"
            )
        if c["rules_rounds"]:
            out.append(
                f"{c['rules_rounds']} rounds of {c['rules_processes']} processes editing the machine rules at once: "
                f"{c['rules_removed']:,} removed, {c['rules_added']:,} added; {c['rules_came_back']} came back, "
                f"{c['rules_lost']} lost, {c['rules_reused']} ids given twice"
            )
        if c["disk_full_runs"]:
            out.append(
                f"{c['disk_full_runs']} runs whose disk filled at a random task: {c['disk_full_bad']} started an agent "
                "after the failed commit, resumed while full, or lost an event"
            )
        if self.seconds:
            out.append("time: " + ", ".join(f"{k} {v:.1f}s" for k, v in sorted(self.seconds.items())))
        return out


TALLY = Tally()
