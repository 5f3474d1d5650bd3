//! Paging of the list RPCs, in one place: the page a request asks for (its size within the
//! server's bound, the token it continues from), the token of the next page, and the bound on
//! the events a filtered scan reads for one page.

use super::*;

/// Default page size when a request leaves it zero.
const DEFAULT_PAGE_SIZE: u32 = 100;
/// Events scanned at most per query call when filtering in the server (bound).
pub(super) const MAX_SCAN_EVENTS: i64 = 50_000;

/// One page of a list RPC: where it continues from (the token: the last position, or id, of
/// the page before) and how many items it returns (the request's size, or the default, within
/// the server's `max_page_size`).
#[derive(Debug, Clone, Copy)]
pub(super) struct Pager {
    pub(super) after: i64,
    pub(super) size: i64,
}

impl Pager {
    /// The page a request asks for; a token that no page gave is an invalid argument.
    pub(super) fn of(page: Option<&pb::PageRequest>, limits: crate::config::Limits) -> Result<Pager, Status> {
        let after = match page.map(|page| page.page_token.as_str()) {
            None | Some("") => 0,
            Some(token) => token
                .parse::<i64>()
                .ok()
                .filter(|position| *position >= 0)
                .ok_or_else(|| status::invalid_field("page.page_token", "not a token from a previous page"))?,
        };
        let requested = page.map_or(0, |page| page.page_size);
        let size = if requested == 0 { DEFAULT_PAGE_SIZE } else { requested };
        Ok(Pager { after, size: i64::from(size.min(limits.max_page_size)) })
    }

    /// The token of the page after one that ended at `last` (empty: there is none).
    pub(super) fn next(last: Option<i64>, more: bool) -> Option<pb::PageResponse> {
        Some(pb::PageResponse {
            next_page_token: match (last, more) {
                (Some(position), true) => position.to_string(),
                _ => String::new(),
            },
        })
    }
}

/// Events of the store filter, further narrowed in the server by time range and event types,
/// scanning at most [`MAX_SCAN_EVENTS`]; returns the matches and the last position scanned.
pub(super) async fn scan(
    ledger: &Ledger,
    store: &Store,
    property: &str,
    mut filter: EventFilter,
    event_types: &[String],
    time_range: Option<&pb::TimeRange>,
    page_size: i64,
) -> Result<(Vec<RecordedEvent>, Option<i64>, bool), Status> {
    check_time_range("time_range", time_range)?;
    if event_types.len() == 1 {
        filter.event_type = Some(event_types[0].clone());
    }
    // When the event happened: an import's own time (the auditor's pass: history imported
    // for 06:00 was found only by the minute it was recorded, days later).
    let in_range = |event: &RecordedEvent| {
        time_range.is_none_or(|range| {
            let at = super::happened_unix_ms(event);
            range.from_unix_ms.is_none_or(|from| at >= from) && range.to_unix_ms.is_none_or(|to| at <= to)
        })
    };
    let mut matched = Vec::new();
    let mut scanned = 0;
    let mut last_position = None;
    loop {
        filter.limit = page_size;
        let page = ledger
            .db_call("events_by_filter", "events", store.events_by_filter(property, &filter))
            .await
            .map_err(|error| store_status("list events", error))?;
        // The store answers at most a page of `MAX_PAGE` whatever the limit asked: a shorter
        // page is the end, a full one is not (the console pass: a patron's day was cut at 5,000
        // transactions, a page taken for the whole).
        let exhausted = (page.len() as i64) < page_size.min(chipledger_store::MAX_PAGE);
        for event in page {
            scanned += 1;
            last_position = Some(event.position);
            filter.after_position = event.position;
            let type_ok = event_types.len() <= 1 || event_types.contains(&event.event_type);
            if type_ok && in_range(&event) {
                matched.push(event);
                if matched.len() as i64 >= page_size {
                    return Ok((matched, last_position, true));
                }
            }
        }
        if exhausted {
            return Ok((matched, last_position, false));
        }
        if scanned >= MAX_SCAN_EVENTS {
            // More may match: the caller continues from the token.
            return Ok((matched, last_position, true));
        }
    }
}

/// Events matched by a report over the whole of a filter at most (a report reads every page:
/// the auditor's pass found a day's reconciliation cut at 1,000 shift closes with nothing to say
/// so; beyond this bound it refuses rather than answer a part as the whole).
pub(super) const MAX_REPORT_EVENTS: usize = 1_000_000;

/// Every event of the store filter, page after page, handed to `each` in log order; a filter
/// matching more than [`MAX_REPORT_EVENTS`] is refused (`OUT_OF_RANGE`, with the bound).
pub(super) async fn scan_each(
    ledger: &Ledger,
    store: &Store,
    property: &str,
    mut filter: EventFilter,
    mut each: impl FnMut(RecordedEvent) -> Result<(), Status>,
) -> Result<(), Status> {
    let mut matched = 0;
    loop {
        let (page, last, more) = scan(ledger, store, property, filter.clone(), &[], None, 1_000).await?;
        matched += page.len();
        if matched > MAX_REPORT_EVENTS {
            return Err(Status::out_of_range(format!(
                "the report would read more than {MAX_REPORT_EVENTS} events of type {}: narrow it",
                filter.event_type.as_deref().unwrap_or("any")
            )));
        }
        page.into_iter().try_for_each(&mut each)?;
        match last {
            Some(position) if more => filter.after_position = position,
            _ => return Ok(()),
        }
    }
}

/// [`scan_each`] collected.
pub(super) async fn scan_all(ledger: &Ledger, store: &Store, property: &str, filter: EventFilter) -> Result<Vec<RecordedEvent>, Status> {
    let mut events = Vec::new();
    scan_each(ledger, store, property, filter, |event| {
        events.push(event);
        Ok(())
    })
    .await?;
    Ok(events)
}
