// Command processor: reads 32-byte commands from the ring in DRAM (up to 4 in flight, responses
// in any order, dispatched in ring order), checks them and dispatches LOAD to the load queue,
// GEMM/POST to the compute queue and STORE to the store queue. SYNC and END wait until the
// whole machine has drained; END finishes the program.
module npu_fetch
  import npu_pkg::*;
(
    input logic clk,
    input logic rst_n,
    input logic ce,
    // control from CSRs
    input logic start,             // doorbell
    input logic [31:0] ring_base,
    input logic [15:0] ring_size,
    input logic [15:0] ring_tail,
    input logic head_reset,
    output logic running,
    output logic [15:0] head,
    output logic done_pulse,
    output logic [31:0] end_code,
    output logic error_pulse,
    output logic [31:0] err_info,
    // DRAM
    output logic req_valid,
    output logic [31:0] req_addr,
    output logic [2:0] req_tag,
    input logic req_fire,
    input logic resp_fire,
    input logic [1:0] resp_tag,
    input logic [255:0] resp_data,
    // dispatch
    output logic [255:0] cmd,
    output logic ldq_push,
    output logic cmpq_push,
    output logic stq_push,
    input logic ldq_full,
    input logic cmpq_full,
    input logic stq_full,
    input logic machine_idle,      // all queues empty, all engines idle, no writes in flight
    // observation and PMU
    output logic obs_valid,
    output logic retire_sync,
    output logic retire_end,
    output logic [2:0] cls
);
  logic [15:0] fptr;  // next ring index to request
  logic [2:0] inflight;  // requests without a response
  logic [1:0] req_slot, head_slot;
  logic [2:0] used;  // slots holding a request or a command
  logic [3:0] slot_valid;
  logic [255:0] slot_cmd[4];
  logic running_q;
  logic [15:0] head_q;

  assign running = running_q;
  assign head = head_q;

  function automatic logic [15:0] wrap_inc(input logic [15:0] v, input logic [15:0] size);
    return (v + 16'd1 >= size) ? 16'd0 : v + 16'd1;
  endfunction

  // Request side.
  assign req_valid = ce && running_q && fptr != ring_tail && used < 3'd4;
  assign req_addr = ring_base + {11'd0, fptr, 5'd0};
  assign req_tag = {1'b0, req_slot};

  // Dispatch side.
  assign cmd = slot_cmd[head_slot];
  logic head_ready;
  assign head_ready = running_q && slot_valid[head_slot];
  logic [3:0] op;
  assign op = cmd[3:0];
  logic pop_prev, pop_next, push_prev, push_next;
  assign {push_next, push_prev, pop_next, pop_prev} = cmd[7:4];

  logic illegal;
  always_comb begin
    unique case (op)
      OP_LOAD: illegal = pop_prev || push_prev;
      OP_STORE: illegal = pop_next || push_next;
      OP_GEMM, OP_POST, OP_SYNC, OP_END: illegal = 1'b0;
      default: illegal = 1'b1;
    endcase
  end

  logic to_ld, to_cmp, to_st, is_barrier, dispatch;
  assign to_ld = op == OP_LOAD;
  assign to_cmp = op == OP_GEMM || op == OP_POST;
  assign to_st = op == OP_STORE;
  assign is_barrier = op == OP_SYNC || op == OP_END;
  always_comb begin
    dispatch = 1'b0;
    if (ce && head_ready && !illegal) begin
      if (to_ld) dispatch = !ldq_full;
      else if (to_cmp) dispatch = !cmpq_full;
      else if (to_st) dispatch = !stq_full;
      else if (is_barrier) dispatch = machine_idle && (op == OP_SYNC || inflight == 3'd0);
    end
  end
  // END waits for its own in-flight prefetches so no stale response arrives after `done`.
  logic end_now, dispatch_ok;
  assign dispatch_ok = dispatch;
  assign end_now = dispatch && op == OP_END;

  assign ldq_push = dispatch_ok && to_ld;
  assign cmpq_push = dispatch_ok && to_cmp;
  assign stq_push = dispatch_ok && to_st;
  assign obs_valid = dispatch_ok;
  assign retire_sync = dispatch_ok && op == OP_SYNC;
  assign retire_end = end_now;
  assign done_pulse = end_now;
  logic illegal_now;
  assign illegal_now = ce && head_ready && illegal;
  assign error_pulse = illegal_now;

  always_ff @(posedge clk) begin
    if (!rst_n) begin
      fptr <= '0;
      inflight <= '0;
      req_slot <= '0;
      head_slot <= '0;
      used <= '0;
      slot_valid <= '0;
      running_q <= 1'b0;
      head_q <= '0;
      end_code <= '0;
      err_info <= '0;
    end else begin
      if (head_reset && !running_q) head_q <= '0;
      // A doorbell while stopped fetches from RING_HEAD; ignored while stale fetches are in flight.
      if (start && !running_q && inflight == 3'd0) begin
        running_q <= 1'b1;
        fptr <= head_q;
        req_slot <= '0;
        head_slot <= '0;
        used <= '0;
        slot_valid <= '0;
      end
      if (ce) begin
        if (resp_fire && running_q) slot_valid[resp_tag] <= 1'b1;
        if (resp_fire && running_q) slot_cmd[resp_tag] <= resp_data;
        if (req_fire) begin
          fptr <= wrap_inc(fptr, ring_size);
          req_slot <= req_slot + 2'd1;
        end
        inflight <= inflight + {2'd0, req_fire} - {2'd0, resp_fire};
        if (dispatch_ok) begin
          slot_valid[head_slot] <= 1'b0;
          head_slot <= head_slot + 2'd1;
          head_q <= wrap_inc(head_q, ring_size);
        end
        used <= used + {2'd0, req_fire} - {2'd0, dispatch_ok};
        if (end_now) begin
          running_q <= 1'b0;
          end_code <= cmd[95:64];
          slot_valid <= '0;
          used <= '0;
        end
        if (illegal_now) begin
          running_q <= 1'b0;
          err_info <= {head_q[11:0], 16'd0, op};
          slot_valid <= '0;
          used <= '0;
        end
      end
    end
  end

  // PMU class.
  always_comb begin
    if (!ce) cls = CLS_THROTTLED;
    else if (!running_q) cls = CLS_IDLE;
    else if (dispatch_ok || req_fire) cls = CLS_ACTIVE;
    else if (head_ready && is_barrier) cls = CLS_STALL_DEP;
    else if (head_ready) cls = CLS_STALL_OUT;
    else if (inflight != 0 || req_valid) cls = CLS_STALL_MEM;
    else cls = CLS_STARVE;
  end
endmodule
