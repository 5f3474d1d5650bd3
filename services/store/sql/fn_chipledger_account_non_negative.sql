-- chipledger_account_non_negative: the accounts that may never go negative (R-UNIT-4): seat
-- stacks, tray denominations, kitty, pots, pocket chips (keys of chipledger_rules::Account::key()).
-- The CHECK of account_balances and the append's balance check ask it. A SQL function (inlined
-- where it is called), its text kept here so verify can compare it (migration 0001 made it).
CREATE OR REPLACE FUNCTION chipledger_account_non_negative(account text)
RETURNS boolean
LANGUAGE sql IMMUTABLE PARALLEL SAFE
AS $$
SELECT account ~ '^table/[^/]+/(seat/[^/]+|tray/[^/]+|kitty|pot/[^/]+)$'
    OR account ~ '^player/[^/]+/pocket$'
$$;
