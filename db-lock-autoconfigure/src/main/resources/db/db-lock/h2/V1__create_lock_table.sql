-- Fencing tokens come from a sequence: they keep increasing after a row is deleted.
CREATE SEQUENCE ${table}_token_seq;

CREATE TABLE ${table} (
    lock_key    VARCHAR(255)                NOT NULL PRIMARY KEY,
    owner       VARCHAR(128)                NOT NULL,
    token       BIGINT                      NOT NULL,
    acquired_at TIMESTAMP(6) WITH TIME ZONE NOT NULL,
    expires_at  TIMESTAMP(6) WITH TIME ZONE NOT NULL
);

CREATE INDEX ${table}_expires_idx ON ${table} (expires_at);
