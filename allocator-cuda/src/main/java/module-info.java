/**
 * datamem CUDA backend: Pinned, device, managed and registered CUDA memory.
 */
module io.datamem.cuda {
    requires transitive io.datamem.impl;
}
