//! `AuditService`: reconciliations, patron cash activity, refusals, and the chain's evidence
//! (verification, digests, signed checkpoints).

use super::*;

#[tonic::async_trait]
impl AuditService for Services {
    async fn table_shift_reconciliation(
        &self,
        request: Request<pb::TableShiftReconciliationRequest>,
    ) -> Result<Response<pb::TableShiftReconciliation>, Status> {
        let principal = principal(&request)?;
        let wish = ReadWish::from_metadata(request.metadata())?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        let (table_id, stream) = table_stream(&request.table_id)?;
        let filter = EventFilter {
            stream: Some(stream.key()),
            event_type: Some("ShiftClosed".to_string()),
            after_position: request.shift_close_position.map_or(0, |position| (position - 1).max(0)),
            ..Default::default()
        };
        let view = self.ledger.reader(&property, wish).await?;
        // The close asked for, else the table's last (every page read: the auditor's pass found
        // the 10,000th close answered as the last).
        let mut chosen = None;
        scan_each(&self.ledger, &view.store, &property, filter, |event| {
            if request.shift_close_position.is_none_or(|position| event.position == position) {
                chosen = Some(event);
            }
            Ok(())
        })
        .await?;
        let Some(event) = chosen else { return Err(status::not_found("shift close of table", table_id.as_str())) };
        // A count that differed from the book was recorded just before the close (R-CHIP-4).
        let before = self
            .ledger
            .db_call("read_stream", "events", view.store.read_stream(&property, &event.stream, event.stream_version - 2, 1))
            .await
            .map_err(|error| store_status("read the count variance", error))?;
        let variance = before.iter().find(|e| e.event_type == "CountVarianceRecorded");
        Ok(view.annotate(Response::new(shift_reconciliation(&table_id, &event, variance)?)))
    }

    async fn gaming_day_reconciliation(
        &self,
        request: Request<pb::GamingDayReconciliationRequest>,
    ) -> Result<Response<pb::GamingDayReconciliation>, Status> {
        let principal = principal(&request)?;
        let wish = ReadWish::from_metadata(request.metadata())?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        check_gaming_day("gaming_day", &request.gaming_day)?;
        let day_filter = |event_type: &str| EventFilter {
            event_type: Some(event_type.to_string()),
            gaming_day: Some(request.gaming_day.clone()),
            ..Default::default()
        };
        let view = self.ledger.reader(&property, wish).await?;
        let store = &view.store;
        // Every close, shift and variance of the day (R-CHIP-4, R-CHIP-5: a day's figures are
        // its whole; they had been cut at 1,000 each, silently).
        let closes = scan_all(&self.ledger, store, &property, day_filter("GamingDayClosed")).await?;
        let mut issued: BTreeMap<i64, i64> = BTreeMap::new();
        let mut returned: BTreeMap<i64, i64> = BTreeMap::new();
        // Each cage's close of the day once (R-CHIP-5: the rules close a day once; a log from
        // before that rule may hold two, of which the last is the day's figure), summed over
        // the cages.
        let mut last_of_cage: BTreeMap<&str, &RecordedEvent> = BTreeMap::new();
        for close in &closes {
            last_of_cage.insert(close.stream.as_str(), close);
        }
        let closed_cage_streams: Vec<String> = last_of_cage.keys().map(|stream| stream.to_string()).collect();
        for close in last_of_cage.into_values() {
            let rules::Event::Cage(rules::CageEvent::GamingDayClosed { issued: i, returned: r, .. }) =
                decode_event(close)?
            else {
                continue;
            };
            for chip in i {
                *issued.entry(chip.denomination_cents).or_default() += chip.count;
            }
            for chip in r {
                *returned.entry(chip.denomination_cents).or_default() += chip.count;
            }
        }
        let to_list = |map: &BTreeMap<i64, i64>| -> Vec<pb::ChipCount> {
            map.iter().map(|(denomination_cents, count)| pb::ChipCount { denomination_cents: *denomination_cents, count: *count }).collect()
        };
        let value = |map: &BTreeMap<i64, i64>| map.iter().map(|(d, c)| d * c).sum::<i64>();
        let shifts = scan_all(&self.ledger, store, &property, day_filter("ShiftClosed")).await?;
        let variances = scan_all(&self.ledger, store, &property, day_filter("CountVarianceRecorded")).await?;
        let mut count_variance_cents = 0;
        let (mut count_shortage_cents, mut count_overage_cents) = (0, 0);
        let mut cage_count_variances = Vec::new();
        for variance in &variances {
            match decode_event(variance)? {
                rules::Event::Cage(rules::CageEvent::CountVarianceRecorded {
                    chips_variance, cash_variance_cents, variance_cents, signers, ..
                }) => {
                    count_variance_cents += variance_cents;
                    let (shortage_cents, overage_cents) = gross(cash_variance_cents, &chips_variance);
                    count_shortage_cents += shortage_cents;
                    count_overage_cents += overage_cents;
                    cage_count_variances.push(pb::CountVariance {
                        stream_id: variance.stream.clone(),
                        global_position: variance.position,
                        chips_variance: chips_to_wire(&chips_variance),
                        cash_variance_cents,
                        variance_cents,
                        signer_1: signers.first,
                        signer_2: signers.second,
                        shortage_cents,
                        overage_cents,
                    });
                }
                rules::Event::Table(rules::TableEvent::CountVarianceRecorded { variance_cents, drop_variance_cents, tray_variance, .. }) => {
                    count_variance_cents += variance_cents;
                    let (shortage_cents, overage_cents) = gross(drop_variance_cents, &tray_variance);
                    count_shortage_cents += shortage_cents;
                    count_overage_cents += overage_cents;
                }
                _ => {}
            }
        }
        let variance_at: std::collections::HashMap<(&str, i64), &RecordedEvent> =
            variances.iter().map(|v| ((v.stream.as_str(), v.stream_version), v)).collect();
        let mut tables = Vec::with_capacity(shifts.len());
        for shift in &shifts {
            let Ok(StreamId::Table(table_id)) = shift.stream.parse::<StreamId>() else {
                return Err(status::internal("reconcile", &"bad table stream"));
            };
            // The variance of a close is the event just before it on the table's stream.
            let variance = variance_at.get(&(shift.stream.as_str(), shift.stream_version - 1)).copied();
            tables.push(shift_reconciliation(&table_id, shift, variance)?);
        }
        let jackpot = self
            .ledger
            .db_call("jackpot_day", "postings", chipledger_store::report::jackpot_day(store, &property, &request.gaming_day))
            .await
            .map_err(|error| store_status("jackpot funds", error))?;
        let jackpot_liability_cents = jackpot.iter().map(|fund| fund.closing_cents).sum();
        let jackpot_funds = jackpot
            .into_iter()
            .map(|fund| pb::JackpotFund {
                table_id: fund.table_id,
                opening_cents: fund.opening_cents,
                drops_cents: fund.drops_cents,
                paid_cents: fund.paid_cents,
                closing_cents: fund.closing_cents,
            })
            .collect();
        let sum = self
            .ledger
            .db_call("balances_sum", "postings", store.balances_sum(&property, AsOf::Head))
            .await
            .map_err(|error| store_status("sum of balances", error))?;
        let rake_cents = tables.iter().map(|shift| shift.rake_cents).sum();
        let toke_cents = tables.iter().map(|shift| shift.toke_cents).sum();
        Ok(view.annotate(Response::new(pb::GamingDayReconciliation {
            gaming_day: request.gaming_day.clone(),
            chips_issued: to_list(&issued),
            chips_returned: to_list(&returned),
            chip_liability_cents: value(&issued) - value(&returned),
            liability_below_zero: liability_below_zero(&issued, &returned),
            tables,
            sum_of_balances_cents: i64::try_from(sum).map_err(|_| status::internal("sum of balances", &"overflow"))?,
            cage_count_variances,
            count_variance_cents,
            rake_cents,
            toke_cents,
            count_shortage_cents,
            count_overage_cents,
            jackpot_funds,
            jackpot_liability_cents,
            closed_cage_streams,
        })))
    }

    async fn patron_cash_activity(
        &self,
        request: Request<pb::PatronCashActivityRequest>,
    ) -> Result<Response<pb::PatronCashActivityResponse>, Status> {
        let principal = principal(&request)?;
        let wish = ReadWish::from_metadata(request.metadata())?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        check_gaming_day("gaming_day", &request.gaming_day)?;
        let pager = Pager::of(request.page.as_ref(), self.ledger.limits())?;
        let filter = EventFilter {
            stream: if request.player_id.is_empty() { None } else { Some(player_stream_key(&request.player_id)?) },
            event_type: Some("CashTransaction".to_string()),
            gaming_day: Some(request.gaming_day.clone()),
            after_position: pager.after,
            ..Default::default()
        };
        let page_size = pager.size;
        let view = self.ledger.reader(&property, wish).await?;
        let (events, last, more) = scan(&self.ledger, &view.store, &property, filter, &[], None, page_size).await?;
        if events.is_empty() && !request.player_id.is_empty() {
            self.patron_in_its_own_case(&property, &view.store, &request.player_id, |known| format!("player_id {known}")).await?;
        }
        // Each patron is listed once, with the whole day: on the page holding their first cash
        // transaction of the day, their every transaction of the day read from their stream (a
        // page of events had split one patron's $65,600 day into partial rows, the first page
        // showing $10,000 and no CTR).
        let mut day_events = Vec::new();
        let mut listed: Vec<String> = Vec::new();
        for event in &events {
            if listed.contains(&event.stream) {
                continue;
            }
            listed.push(event.stream.clone());
            // Every one of the day's transactions, page after page (the console pass: a patron's
            // 5,001st transaction of a day, and the CTR it required, went unreported).
            let mut own: Vec<RecordedEvent> = Vec::new();
            loop {
                let whole_day = EventFilter {
                    stream: Some(event.stream.clone()),
                    event_type: Some("CashTransaction".to_string()),
                    gaming_day: Some(request.gaming_day.clone()),
                    after_position: own.last().map_or(0, |last| last.position),
                    ..Default::default()
                };
                let (page, _, more) = scan(&self.ledger, &view.store, &property, whole_day, &[], None, MAX_SCAN_EVENTS).await?;
                let empty = page.is_empty();
                own.extend(page);
                if !more || empty {
                    break;
                }
            }
            let Some(first) = own.first() else { continue };
            if first.position <= pager.after {
                continue; // listed on an earlier page
            }
            // R-AUDIT-4 with R-AUDIT-1: the cash of the day that corrections took back, on that
            // day or any later one (a corrected $12,000 buy-in had stayed in the day's total).
            let mut after = first.position;
            loop {
                let corrections = EventFilter {
                    stream: Some(event.stream.clone()),
                    event_type: Some("Corrected".to_string()),
                    after_position: after,
                    ..Default::default()
                };
                let (page, _, more) = scan(&self.ledger, &view.store, &property, corrections, &[], None, MAX_SCAN_EVENTS).await?;
                let Some(last) = page.last() else { break };
                after = last.position;
                day_events.extend(page);
                if !more {
                    break;
                }
            }
            day_events.extend(own);
        }
        // R-AUDIT-1: the commands whose cash a correction took back, with the correction's
        // position: a correction reverses the table or cage event, and the cash transaction of
        // the same command is the entry it took back (the MTL had listed a taken-back entry with
        // nothing to say so; the patron's totals did).
        let mut taken_back: std::collections::HashMap<String, i64> = std::collections::HashMap::new();
        for event in &day_events {
            let rules::Event::Player(rules::PlayerEvent::Corrected {
                reverses_event_id,
                reversal: rules::PlayerReversal::CashTransaction { gaming_day, .. },
                ..
            }) = decode_event(event)?
            else {
                continue;
            };
            if gaming_day != request.gaming_day {
                continue;
            }
            let Ok(event_id) = uuid::Uuid::parse_str(&reverses_event_id) else { continue };
            let reversed = self.ledger.event_by_id(&view.store, &property, event_id).await?;
            if let Some(command_id) = reversed.and_then(|reversed| reversed.typed_metadata().ok()).and_then(|metadata| metadata.command_id) {
                taken_back.insert(command_id, event.position);
            }
        }
        // R-AUDIT-4: cash in and cash out summed separately, never netted.
        let mut patrons: BTreeMap<String, pb::PatronCashActivity> = BTreeMap::new();
        for event in &day_events {
            let Ok(StreamId::Player(player_id)) = event.stream.parse::<StreamId>() else { continue };
            let player_id = player_id.as_str().to_owned();
            let patron = patrons.entry(player_id.clone()).or_insert_with(|| pb::PatronCashActivity {
                player_id,
                gaming_day: request.gaming_day.clone(),
                ..Default::default()
            });
            let (direction, amount_cents, mtl_entry, ctr_required) = match decode_event(event)? {
                rules::Event::Player(rules::PlayerEvent::CashTransaction { direction, amount_cents, mtl_entry, ctr_required, .. }) => {
                    (direction, amount_cents, mtl_entry, ctr_required)
                }
                rules::Event::Player(rules::PlayerEvent::Corrected {
                    reversal: rules::PlayerReversal::CashTransaction { gaming_day, direction, amount_cents, .. },
                    ..
                }) if gaming_day == request.gaming_day => {
                    let (total, corrected) = match direction {
                        rules::CashDirection::In => (&mut patron.cash_in_cents, &mut patron.cash_in_corrected_cents),
                        rules::CashDirection::Out => (&mut patron.cash_out_cents, &mut patron.cash_out_corrected_cents),
                    };
                    *total -= amount_cents;
                    *corrected += amount_cents;
                    continue;
                }
                _ => continue,
            };
            let inbound = matches!(direction, rules::CashDirection::In);
            if inbound {
                patron.cash_in_cents += amount_cents;
                patron.ctr_required_cash_in |= ctr_required;
            } else {
                patron.cash_out_cents += amount_cents;
                patron.ctr_required_cash_out |= ctr_required;
            }
            let entry = || pb::CashTransaction {
                global_position: event.position,
                amount_cents,
                direction: if inbound { "in" } else { "out" }.to_string(),
                event_type: event.event_type.clone(),
                at_unix_ms: super::happened_unix_ms(event),
                taken_back_at_position: event
                    .typed_metadata()
                    .ok()
                    .and_then(|metadata| metadata.command_id)
                    .and_then(|command_id| taken_back.get(&command_id).copied())
                    .unwrap_or(0),
            };
            if mtl_entry {
                patron.mtl_entries.push(entry());
            }
            // Each crossing apart: after a correction took the day back under the threshold, the
            // next crossing requires a CTR of its own (the cash pass: one flag told neither).
            if ctr_required {
                patron.ctr_entries.push(entry());
            }
        }
        // In the order of each patron's first cash transaction of the day, as the pages list
        // them: one order whatever the page size (the replay pass: one page was sorted by id,
        // several by position).
        let patrons = listed
            .iter()
            .filter_map(|stream| match stream.parse::<StreamId>() {
                Ok(StreamId::Player(player_id)) => patrons.remove(player_id.as_str()),
                _ => None,
            })
            .collect();
        Ok(view.annotate(Response::new(pb::PatronCashActivityResponse {
            patrons,
            page: Pager::next(last, more),
        })))
    }

    async fn list_rejections(
        &self,
        request: Request<pb::ListRejectionsRequest>,
    ) -> Result<Response<pb::ListRejectionsResponse>, Status> {
        let principal = principal(&request)?;
        let wish = ReadWish::from_metadata(request.metadata())?;
        let request = request.into_inner();
        let property = self.ledger.property(&principal, &request.property_id)?;
        check_time_range("time_range", request.time_range.as_ref())?;
        let pager = Pager::of(request.page.as_ref(), self.ledger.limits())?;
        let mut after_id = pager.after;
        let page_size = pager.size;
        let table_stream = (!request.table_id.is_empty()).then(|| format!("table-{}", request.table_id));
        let player_stream = (!request.player_id.is_empty()).then(|| format!("player-{}", request.player_id));
        let gaming_day = (!request.gaming_day.is_empty()).then_some(request.gaming_day.as_str());
        if let Some(day) = gaming_day {
            check_gaming_day("gaming_day", day)?;
        }
        let mut matched = Vec::new();
        let mut scanned = 0;
        let mut more = false;
        let view = self.ledger.reader(&property, wish).await?;
        loop {
            let page = self
                .ledger
                .db_call(
                    "list_rejections",
                    "rejections",
                    view.store.rejections_of(&property, after_id, page_size, None, gaming_day),
                )
                .await
                .map_err(|error| store_status("list rejections", error))?;
            let exhausted = (page.len() as i64) < page_size;
            for rejection in page {
                after_id = rejection.rejection_id;
                scanned += 1;
                let record = &rejection.record;
                let at = unix_ms(rejection.recorded_at);
                // A patron's refusals under any case of their id: one person, one id (the AML
                // pass: sales refused under "alice" were not listed for ALICE).
                let keep = table_stream.as_ref().is_none_or(|stream| record.streams.contains(stream))
                    && player_stream.as_ref().is_none_or(|stream| {
                        record.streams.iter().any(|named| named.eq_ignore_ascii_case(stream))
                            || record.player_id.as_deref().is_some_and(|id| id.eq_ignore_ascii_case(&request.player_id))
                    })
                    && (request.reason_code.is_empty() || record.reason_code == request.reason_code)
                    && request.time_range.as_ref().is_none_or(|range| {
                        range.from_unix_ms.is_none_or(|from| at >= from) && range.to_unix_ms.is_none_or(|to| at <= to)
                    });
                if keep {
                    matched.push(pb::RejectionRecord {
                        command_id: record.command_id.clone(),
                        command_type: command_type_of(&record.request),
                        reason_code: record.reason_code.clone(),
                        rule_id: record.rule_id.clone(),
                        numbers: record.numbers.iter().cloned().collect(),
                        detail: record.detail.clone(),
                        actor_id: record.actor_id.clone(),
                        actor_role: wire_role(&record.actor_role) as i32,
                        at_unix_ms: at,
                        gaming_day: record.gaming_day.clone().unwrap_or_default(),
                        request_json: record.request.to_string(),
                        player_id: record.player_id.clone().unwrap_or_default(),
                        refusal_seq: rejection.refusal_seq.unwrap_or_default(),
                        imported_by: record.request.get(crate::ledger::IMPORTED_BY).and_then(|v| v.as_str()).unwrap_or_default().to_owned(),
                    });
                    if matched.len() as i64 >= page_size {
                        more = true;
                        break;
                    }
                }
            }
            if more || exhausted {
                break;
            }
            if scanned >= MAX_SCAN_EVENTS {
                more = true;
                break;
            }
        }
        Ok(view.annotate(Response::new(pb::ListRejectionsResponse {
            rejections: matched,
            page: Some(pb::PageResponse { next_page_token: if more { after_id.to_string() } else { String::new() } }),
        })))
    }

    async fn verify_chain(
        &self,
        request: Request<pb::VerifyChainRequest>,
    ) -> Result<Response<pb::VerifyChainResponse>, Status> {
        let property = self.ledger.property(&principal(&request)?, &request.get_ref().property_id)?;
        let view = self.ledger.reader(&property, ReadWish::from_metadata(request.metadata())?).await?;
        Ok(view.annotate(Response::new(crate::evidence::verify(&self.ledger, &view.store, property, request.into_inner()).await?)))
    }

    async fn get_chain_digest(
        &self,
        request: Request<pb::GetChainDigestRequest>,
    ) -> Result<Response<pb::ChainDigest>, Status> {
        let property = self.ledger.property(&principal(&request)?, &request.get_ref().property_id)?;
        let view = self.ledger.reader(&property, ReadWish::from_metadata(request.metadata())?).await?;
        let (events, refusals) = self
            .ledger
            .db_call("chain_digest", "events", view.store.heads(&property))
            .await
            .map_err(|error| store_status("chain digest", error))?;
        Ok(view.annotate(Response::new(pb::ChainDigest {
            global_position: events.0,
            chain_hash_hex: hex::encode(events.1),
            refusal_seq: refusals.0,
            refusal_hash_hex: hex::encode(refusals.1),
        })))
    }

    async fn list_checkpoints(
        &self,
        request: Request<pb::ListCheckpointsRequest>,
    ) -> Result<Response<pb::ListCheckpointsResponse>, Status> {
        let property = self.ledger.property(&principal(&request)?, &request.get_ref().property_id)?;
        let pager = Pager::of(request.get_ref().page.as_ref(), self.ledger.limits())?;
        let page_size = pager.size;
        let view = self.ledger.reader(&property, ReadWish::from_metadata(request.metadata())?).await?;
        Ok(view.annotate(Response::new(crate::evidence::list(&self.ledger, &view.store, property, request.into_inner(), page_size).await?)))
    }

    async fn sign_checkpoint(
        &self,
        request: Request<pb::SignCheckpointRequest>,
    ) -> Result<Response<pb::SignedCheckpoint>, Status> {
        let property = self.ledger.property(&principal(&request)?, &request.get_ref().property_id)?;
        Ok(Response::new(crate::evidence::sign(&self.ledger, property, request.into_inner()).await?))
    }

    async fn get_checkpoint_key(
        &self,
        _request: Request<pb::GetCheckpointKeyRequest>,
    ) -> Result<Response<pb::CheckpointKey>, Status> {
        Ok(Response::new(crate::evidence::key(&self.ledger)?))
    }
}

/// A shift close as reported, with the count variance recorded just before it, if any.
pub(super) fn shift_reconciliation(
    table_id: &rules::TableId,
    event: &RecordedEvent,
    variance: Option<&RecordedEvent>,
) -> Result<pb::TableShiftReconciliation, Status> {
    let rules::Event::Table(TableEvent::ShiftClosed {
        opening_tray, closing_tray, fills_cents, credits_cents, drop_cents, result_cents, rake_cents, toke_cents, signers, ..
    }) = decode_event(event)?
    else {
        return Err(status::internal("reconcile", &"not a ShiftClosed event"));
    };
    let (tray_variance, drop_variance_cents, variance_cents) = match variance.map(decode_event).transpose()? {
        Some(rules::Event::Table(TableEvent::CountVarianceRecorded { tray_variance, drop_variance_cents, variance_cents, .. })) => {
            (chips_to_wire(&tray_variance), drop_variance_cents, variance_cents)
        }
        _ => (Vec::new(), 0, 0),
    };
    let signers = signers.unwrap_or_default();
    let gaming_day = event.typed_metadata().map(|metadata| metadata.gaming_day).unwrap_or_default();
    Ok(pb::TableShiftReconciliation {
        tray_variance,
        drop_variance_cents,
        variance_cents,
        signer_1: signers.first,
        signer_2: signers.second,
        table_id: table_id.to_string(),
        gaming_day,
        opening_inventory_cents: rules::money::chips_value_cents(&opening_tray),
        closing_inventory_cents: rules::money::chips_value_cents(&closing_tray),
        fills_cents,
        credits_cents,
        drop_cents,
        result_cents,
        shift_close_position: event.position,
        opening_tray: chips_to_wire(&opening_tray),
        closing_tray: chips_to_wire(&closing_tray),
        rake_cents,
        toke_cents,
    })
}

/// R-CHIP-5: the denominations of which more came back than was issued, with the count below
/// zero (the cage pass: $25 chips at -113 outstanding, reported without a word).
fn liability_below_zero(issued: &BTreeMap<i64, i64>, returned: &BTreeMap<i64, i64>) -> Vec<pb::ChipCount> {
    returned
        .iter()
        .filter_map(|(denomination, back)| {
            let outstanding = issued.get(denomination).copied().unwrap_or(0) - back;
            (outstanding < 0).then_some(pb::ChipCount { denomination_cents: *denomination, count: outstanding })
        })
        .collect()
}

/// R-CHIP-4: a count's variance gross: (short, over) of the money and each denomination, each
/// its own line; never netted (an overage of chips had hidden a shortage of cash).
fn gross(money_variance_cents: i64, chips_variance: &[rules::ChipCount]) -> (i64, i64) {
    let lines = std::iter::once(money_variance_cents).chain(chips_variance.iter().map(|chip| chip.denomination_cents * chip.count));
    lines.fold((0, 0), |(short, over), line| if line < 0 { (short - line, over) } else { (short, over + line) })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// R-CHIP-4: the credit pass counted $500 of cash short beside five $100 chips over, and
    /// the day read $0 of variance: shortages and overages are summed apart.
    #[test]
    fn r_chip_4_a_counts_shortage_is_never_offset_by_an_overage() {
        let over = [rules::ChipCount { denomination_cents: 10_000, count: 5 }, rules::ChipCount { denomination_cents: 500, count: -3 }];
        assert_eq!(gross(-50_000, &over), (51_500, 50_000));
        assert_eq!(gross(0, &[]), (0, 0));
    }

    #[test]
    fn r_chip_5_a_denomination_back_more_than_issued_is_flagged_with_its_count() {
        let issued = BTreeMap::from([(500, 40), (2_500, 107)]);
        let returned = BTreeMap::from([(500, 40), (2_500, 220), (10_000, 3)]);
        let flagged = liability_below_zero(&issued, &returned);
        let flagged: Vec<(i64, i64)> = flagged.iter().map(|chip| (chip.denomination_cents, chip.count)).collect();
        assert_eq!(flagged, vec![(2_500, -113), (10_000, -3)]);
        assert!(liability_below_zero(&returned, &issued).is_empty());
    }
}
