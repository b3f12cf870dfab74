// The followed thread's goal read again, after an action on it was refused.
import { api } from "./api.js";
import { schedule } from "./render.js";
import { state } from "./state.js";

// The followed thread's goal as the server has it now, unless the one held is as new.
export async function readGoal() {
  const thread = state.thread;
  try {
    const goal = await api(`/api/threads/${encodeURIComponent(thread)}/goal`);
    if (state.thread !== thread || (state.goal && goal.version <= state.goal.version)) return;
    state.goal = goal;
    schedule("goal", "threads");
  } catch {
    // away: the stream's reconnect brings it
  }
}
