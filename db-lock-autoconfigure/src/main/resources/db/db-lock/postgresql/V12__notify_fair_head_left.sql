-- Wake-ups for the fair mode: when the ticket at the head of a key's queue is deleted
-- (released, given up, or deleted as ended by a waiter or the reaper) and the ticket next
-- behind it is another engine's, the deleting transaction notifies the channel named after
-- the lock table with the key, as V11's trigger does for the lease mode; PostgreSQL delivers
-- it when that transaction commits, and not if it rolls back. The node whose earliest waiter
-- for the key listens asks again at once instead of at its next back-off. An engine's
-- instance is its owner ids' part before their last '#' (host/pid/random). No notification,
-- and no commit-time lock of the notification queue, for a ticket deleted with none behind it
-- (every uncontended release), with one still ahead of it, or followed by one of its own
-- engine's (which hands the key on, or wakes its next thread itself). A notification is a
-- hint: the waiter's own look at the head decides. The function reads the queue by the name
-- it has at this migration (its search_path is fixed here), whatever the deleting session's is.
CREATE OR REPLACE FUNCTION ${table}_fair_wake_waiters() RETURNS trigger LANGUAGE plpgsql
    SET search_path FROM CURRENT AS $$
DECLARE
    next_owner VARCHAR(128);
BEGIN
    IF EXISTS (SELECT 1 FROM ${table}_fair_queue WHERE lock_key = OLD.lock_key AND ticket < OLD.ticket) THEN
        RETURN NULL;
    END IF;
    SELECT owner INTO next_owner FROM ${table}_fair_queue WHERE lock_key = OLD.lock_key AND ticket > OLD.ticket
        ORDER BY ticket LIMIT 1;
    IF next_owner IS NOT NULL AND coalesce(substring(next_owner FROM '^(.*)#'), next_owner)
            IS DISTINCT FROM coalesce(substring(OLD.owner FROM '^(.*)#'), OLD.owner) THEN
        PERFORM pg_notify('${table}', OLD.lock_key);
    END IF;
    RETURN NULL;
END
$$;

DROP TRIGGER IF EXISTS ${table}_fair_wake_waiters ON ${table}_fair_queue;

CREATE TRIGGER ${table}_fair_wake_waiters AFTER DELETE ON ${table}_fair_queue
    FOR EACH ROW EXECUTE FUNCTION ${table}_fair_wake_waiters();
