/* The public API of <gpubp/comm.h>: gpubp_open_comm and gpubp_comm_error. */
#include "engine/collective.h"
#include "engine/engine.h"

#include "gpubp/cuda.h"

int gpubp_open_comm(gpubp_file **out, const char *path, gpubp_mode mode, const char *params,
                    const gpubp_comm_ops *ops, void *ctx)
{
    if (out) *out = NULL;
    int freeable = ops && ops->version == GPUBP_COMM_OPS_VERSION && ops->free && ctx;
    const char *bad = NULL;
    if (!ops || !ctx) bad = "ops or ctx is NULL";
    else if (ops->version != GPUBP_COMM_OPS_VERSION) bad = "the operations table has another version";
    else if (!ops->free || !ops->rank || !ops->size || !ops->barrier || !ops->bcast ||
             !ops->gather || !ops->allreduce_i64 || !ops->exscan_u64 || !ops->split ||
             !ops->split_node || !ops->send || !ops->recv)
        bad = "the operations table is incomplete";
    if (!bad && !out)
        return gbp_comm_open_failed(ops, ctx, gbp_error(GPUBP_ERR_INVALID_ARG, 0,
                                    "gpubp_open_comm: argument 'out' is NULL"), "gpubp_open");
    if (bad) {
        if (freeable) ops->free(ctx);
        return gbp_error(GPUBP_ERR_INVALID_ARG, 0, "gpubp_open_comm: %s", bad);
    }
    gbp_comm *comm;
    GBP_FORWARD_IF_ERROR(gbp_comm_open(&comm, ops, ctx));
    return gbp_engine_open(out, path, mode, params, comm);
}

int gpubp_comm_error(int status, int native, const char *message)
{
    return gbp_error(status, native, "%s", message ? message : "");
}
