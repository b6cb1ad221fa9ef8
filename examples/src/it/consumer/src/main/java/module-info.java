/** A datamem user's program. */
module com.example.consumer {
    requires io.datamem.impl;
}
