-- 0016: the latest gaming day a property recorded, kept with its head, so that what is recorded
-- as it happens never goes on an earlier day whichever replica records it (R-CHIP-6, R-AUDIT-4;
-- chipledger_append refuses such a member with CL009 and the server decides it again on that
-- day). NULL until the next append.
ALTER TABLE property_heads ADD COLUMN last_gaming_day date;
