// Requests to the panel's own server: the token from the page's address (/?token=) goes with
// every request as a bearer header, and every answer is read by parse().
// The token as typed in the address: URLSearchParams reads "+" as a space, and a base64
// token ("Ab+cD/eF==") would be refused; only %-escapes are decoded.
function addressToken() {
  const match = /(?:^|&)token=([^&]*)/.exec(location.search.slice(1));
  if (!match) return null;
  try {
    return decodeURIComponent(match[1]) || null;
  } catch {
    return match[1]; // a "%" that starts no escape is part of the token
  }
}
export const token = addressToken();

// Token budgets and usages may pass 2^53 (the CLI takes up to 2^63-1), where a JSON number
// loses digits: those fields are read from their source text as BigInt (JSON.parse source
// text access); where the browser cannot, tokens() says "over 9,007,199,254,740,991".
const BIG_FIELDS = new Set(["token_budget", "tokens_used"]);
export function parse(text) {
  return JSON.parse(text, (key, value, context) => (BIG_FIELDS.has(key) && typeof value === "number"
    && !Number.isSafeInteger(value) && /^\d+$/.test(context?.source ?? "") ? BigInt(context.source) : value));
}

export async function api(path, options = {}) {
  const headers = { "Content-Type": "application/json" };
  if (token) headers.Authorization = `Bearer ${token}`;
  // A request that got no answer (the server stopped, restarting, unreachable) says so, not
  // the browser's "Failed to fetch"; `away` tells it from a refusal.
  const response = await fetch(path, { ...options, headers }).catch(() => {
    throw Object.assign(new Error("the server did not answer: try again once the panel is live"), { away: true });
  });
  const body = await response.text().then(parse).catch(() => ({}));
  if (!response.ok) throw Object.assign(new Error(body.message || `HTTP ${response.status}`), { status: response.status });
  return body;
}
