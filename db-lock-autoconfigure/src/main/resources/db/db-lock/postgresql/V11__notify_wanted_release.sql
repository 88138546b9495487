-- Wake-ups: when a lease row that another owner's refused attempt marked as wanted is
-- deleted (released, ceded, given up), the deleting transaction notifies the channel named
-- after the lock table with the row's key; PostgreSQL delivers it when that transaction
-- commits, and not if it rolls back. A node whose thread waits for the key listens on the
-- channel and asks again at once instead of at its next back-off. Rows never marked wanted
-- (every uncontended release) and a semaphore's permits (whose waiters poll) skip the
-- trigger by its WHEN clause: no notification, no commit-time lock of the notification queue.
CREATE OR REPLACE FUNCTION ${table}_wake_waiters() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('${table}', OLD.lock_key);
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS ${table}_wake_waiters ON ${table};

CREATE TRIGGER ${table}_wake_waiters AFTER DELETE ON ${table}
    FOR EACH ROW WHEN (OLD.wanted_at IS NOT NULL AND OLD.lock_key NOT LIKE '%#permit-%')
    EXECUTE FUNCTION ${table}_wake_waiters();
