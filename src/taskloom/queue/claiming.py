"""A claim as the queue makes it: its arguments checked, with the claiming process and a new
lease token."""

from __future__ import annotations

from taskloom._runtime import HOST, current_pid, new_token
from taskloom.domain.errors import InvalidInput
from taskloom.domain.lease import MAX_CLAIM_BATCH, Claim
from taskloom.domain.queue import check_agent, check_kinds, check_seconds


def new_claim(
    agent_id: object, n: object, lease: object, kinds: object, bind_process: object
) -> Claim:
    """A claim's arguments checked, with this process and a new lease token."""
    agent = check_agent(agent_id, "an agent id to claim for")
    if type(n) is not int or not 1 <= n <= MAX_CLAIM_BATCH:
        raise InvalidInput(
            f"a batch claim takes a whole number of tasks, from 1 to {MAX_CLAIM_BATCH}"
        )
    seconds = check_seconds(lease, "a lease", positive=True)
    checked = () if kinds is None else tuple(check_kinds(kinds))
    if type(bind_process) is not bool:
        raise InvalidInput(f"bind_process is true or false, not {bind_process!r}")
    pid = current_pid() if bind_process else None
    return Claim(agent, n, seconds, checked, pid, HOST, new_token())
