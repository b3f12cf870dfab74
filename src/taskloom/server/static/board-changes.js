// The board held: its changes applied in version order, read whole again when one is missed.
import { api } from "./api.js";
import { schedule } from "./render.js";
import { state } from "./state.js";

// A board's change (todo_change) applies to the board at the version before it: its cards
// replace theirs by id, its removed ids go, and the cards are shown by their order. A change
// that does not follow the board held (one was missed: the stream resumed past it, or it came
// while the board was being read) is kept, and the board is read whole again; the kept changes
// that follow what was read then apply. A thread's first change applies to an empty board.
export const boardChanges = new Map(); // version -> change not applied yet
let boardRead = null; // the thread whose board is being read whole, or null

export function applyChange(change) {
  if (state.board && change.version <= state.board.version) return;
  boardChanges.set(change.version, change);
  drainChanges();
}

export function drainChanges(afterRead = false) {
  if (!state.board && boardChanges.has(1)) state.board = { thread_id: state.thread, version: 0, cards: [] };
  if (state.board) {
    for (const version of [...boardChanges.keys()]) if (version <= state.board.version) boardChanges.delete(version);
    for (let next; (next = boardChanges.get(state.board.version + 1));) {
      boardChanges.delete(next.version);
      state.board = merged(state.board, next);
    }
  }
  schedule("board");
  if (!boardChanges.size) return;
  // Still a change missing right after a read: read again shortly, not in a tight loop.
  if (afterRead) setTimeout(() => { if (boardChanges.size) readBoard(); }, 1000);
  else readBoard();
}

function merged(board, change) {
  const gone = new Set([...change.removed, ...change.cards.map((c) => c.id)]);
  const cards = board.cards.filter((c) => !gone.has(c.id)).concat(change.cards).sort((a, b) => a.order - b.order);
  return { thread_id: board.thread_id, version: change.version, updated_at: change.updated_at, cards,
    summary: change.summary, ready_count: change.ready_count };
}

export async function readBoard() {
  if (boardRead !== null) return;
  const thread = state.thread;
  boardRead = thread;
  let board = null;
  try {
    board = await api(`/api/threads/${encodeURIComponent(thread)}/board`);
  } catch {
    // the server is away: the stream's reconnect reads it again
  } finally {
    boardRead = null;
  }
  if (state.thread !== thread) return;
  if (board && (!state.board || board.version > state.board.version)) state.board = board;
  drainChanges(true);
}

// A thread without a board has no todo_state in the stream's opening, so the board would say
// "Loading…" for ever. Once an opening has ended without one (or a resumed stream is open
// while none is held) the board is asked for, and shown only if the stream sent none meanwhile.
export async function loadBoardIfNone(source) {
  const thread = state.thread;
  if (state.board !== null) return;
  try {
    const board = await api(`/api/threads/${encodeURIComponent(thread)}/board`);
    if (source !== state.source || state.thread !== thread || state.board !== null) return;
    state.board = board;
    drainChanges();
  } catch {
    // the server is away (the stream says so) or refused the thread (the list says why)
  }
}
