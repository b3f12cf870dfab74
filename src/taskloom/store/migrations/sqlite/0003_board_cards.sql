-- A board's cards, one row each: a change writes the cards it changes, not the whole board.
-- The board's document (kind 'board') keeps its version and what it holds beside its cards;
-- a board stored whole in its document (before this table) moves here on its next change.
-- `position` is the card's sort key (its `order`); `data` is the card as JSON.
CREATE TABLE board_cards (
    thread_id TEXT    NOT NULL,
    card_id   TEXT    NOT NULL,
    position  INTEGER NOT NULL,
    data      TEXT    NOT NULL,
    PRIMARY KEY (thread_id, card_id)
) WITHOUT ROWID;
