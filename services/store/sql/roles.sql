-- The roles of a chipledger database (docs/OPERATIONS.md, "Deployment roles"), run by
-- Store::migrate as the admin before the numbered migrations. Idempotent; roles are
-- cluster-wide, so two databases of one cluster may run this at the same moment.
--   chipledger_owner  NOLOGIN: owns every table, view and function; nobody logs in as it.
--   chipledger_app    the service: EXECUTE on the functions of services/store/sql, nothing else.
--                     Created NOLOGIN; the admin gives it LOGIN and a password.
--   the admin         whoever runs this: becomes a member of chipledger_owner to create and
--                     change objects as it.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'chipledger_owner') THEN
        CREATE ROLE chipledger_owner NOLOGIN;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END
$$;
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'chipledger_app') THEN
        CREATE ROLE chipledger_app NOLOGIN;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
END
$$;
DO $$
BEGIN
    IF NOT pg_has_role(current_user, 'chipledger_owner', 'MEMBER') THEN
        EXECUTE format('GRANT chipledger_owner TO %I', current_user);
    END IF;
EXCEPTION WHEN unique_violation THEN NULL;
END
$$;
-- Objects an earlier release created as the admin itself become the owner's.
DO $$
DECLARE
    o record;
BEGIN
    FOR o IN SELECT c.relname, c.relkind FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
              WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm')
                AND c.relowner = current_user::regrole
                AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass
                                   AND d.objid = c.oid AND d.deptype = 'e')
    LOOP
        EXECUTE format('ALTER %s %I OWNER TO chipledger_owner',
                       CASE o.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END,
                       o.relname);
    END LOOP;
    FOR o IN SELECT p.oid::regprocedure AS routine FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
              WHERE n.nspname = 'public' AND p.proowner = current_user::regrole
                AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass
                                   AND d.objid = p.oid AND d.deptype = 'e')
    LOOP
        EXECUTE format('ALTER ROUTINE %s OWNER TO chipledger_owner', o.routine);
    END LOOP;
END
$$;
GRANT USAGE, CREATE ON SCHEMA public TO chipledger_owner;
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO chipledger_app;
